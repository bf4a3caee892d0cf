import { writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runCommand } from "./exec.js";
import { hashFiles, listFiles } from "./filehash.js";
import { runGo } from "./node/gotool.js";
import { goModuleDir } from "./paths.js";
import { makeTempDir } from "./tempdirs.js";

/** The gopher-lua release Argo CD pins in its go.mod; test/env/argocd-lua/go.mod requires the same. */
export const GOPHER_LUA_VERSION = "v1.1.2";

export type LuaMode = "health" | "discovery" | "action";

export interface ArgoCdLua {
  /** Runs one script on one object as Argo CD does and returns what the script returned. */
  run(mode: LuaMode, scriptPath: string, obj: unknown): Promise<Record<string, unknown>>;
}

let pending: Promise<string> | undefined;

/**
 * The runner built from test/env/argocd-lua (gopher-lua and the JSON bridge Argo CD uses), cached
 * under a key of its sources: one build per process, and two processes that race both build but
 * only one result is renamed into place.
 */
export function ensureArgoCdLua(onProgress: (line: string) => void = () => {}): Promise<ArgoCdLua> {
  if (!pending) {
    pending = build(onProgress);
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending.then(runner);
}

async function build(onProgress: (line: string) => void): Promise<string> {
  const src = join(goModuleDir(), "argocd-lua");
  const files = (await listFiles(src)).filter((f) => /(\.go|go\.mod|go\.sum)$/.test(f));
  const key = await hashFiles(
    src,
    files.map((f) => relative(src, f)),
  );
  const dir = join(cacheRoot(), `argocd-lua-${GOPHER_LUA_VERSION}-${key}`);
  const binary = join(dir, "argocd-lua");
  if (await exists(binary)) return binary;
  onProgress(`building the Argo CD Lua runner (gopher-lua ${GOPHER_LUA_VERSION}) into ${dir}`);
  const started = Date.now();
  await populateAtomically(dir, async (scratch) => {
    await runGo({
      label: `argocd-lua (gopher-lua ${GOPHER_LUA_VERSION})`,
      args: [
        "build",
        "-v",
        "-trimpath",
        "-buildvcs=false",
        "-ldflags=-s -w",
        "-o",
        join(scratch, "argocd-lua"),
        ".",
      ],
      cwd: src,
      env: { CGO_ENABLED: "0" },
      onProgress,
    });
    if (!(await exists(join(scratch, "argocd-lua"))))
      throw new Error("building argocd-lua produced no binary");
  });
  onProgress(`built argocd-lua in ${formatDuration(Date.now() - started)}`);
  return binary;
}

function runner(binary: string): ArgoCdLua {
  const dir = makeTempDir("argocd-lua");
  let calls = 0;
  return {
    async run(mode, scriptPath, obj) {
      const input = join(dir, `object-${++calls}.json`);
      await writeFile(input, JSON.stringify(obj));
      const { stdout } = await runCommand(binary, [mode, scriptPath, input]);
      return JSON.parse(stdout) as Record<string, unknown>;
    },
  };
}
