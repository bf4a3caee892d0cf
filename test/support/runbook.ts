import assert from "node:assert/strict";
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureBinaries } from "../../src/testenv/binaries.js";
import { runCommand } from "../../src/testenv/exec.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

// The runbooks as their reader uses them: the `sh` blocks of a section read from docs/runbooks/
// itself (what a user pastes is what runs) and run with bash, with the variables the section names.

const RUNBOOKS = fileURLToPath(new URL("../../../docs/runbooks/", import.meta.url));
/** The project's root: a release's files (deploy/crds/) as a runbook names them. */
export const RELEASE_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The text under a `## ` heading of a runbook, up to the next, or its intro with "". */
export function section(file: string, heading: string): string {
  const md = readFileSync(join(RUNBOOKS, file), "utf8");
  const start = heading ? md.indexOf(`\n## ${heading}\n`) : 0;
  assert.ok(start >= 0, `${file} has a section ${heading}`);
  const end = md.indexOf("\n## ", start + 1);
  return md.slice(start, end < 0 ? undefined : end);
}

/** The `sh` blocks under a `## ` heading of a runbook (list-indented ones too), or its intro with "". */
export function shellBlocks(file: string, heading: string): string[] {
  const body = section(file, heading);
  const blocks: string[] = [];
  for (const m of body.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm))
    blocks.push(
      m[2]!
        .split("\n")
        .map((l) => l.slice(m[1]!.length))
        .join("\n"),
    );
  return blocks;
}

/** The one block of a section that contains `marker`. */
export function block(file: string, heading: string, marker: string): string {
  const found = shellBlocks(file, heading).filter((b) => b.includes(marker));
  assert.equal(found.length, 1, `one block of ${file} "${heading}" holds ${marker}`);
  return found[0]!;
}

/**
 * Runs a block with bash as a user's shell would, with `env` (the section's variables, PATH with
 * kubectl and bao). `check` blocks may end non-zero (`bao status` exits 2 while sealed); the others
 * stop at their first failure. Bounded, so a documented wait that never ends fails the test.
 * `cwd`: where a block that names files of a release (`deploy/crds/…`) is run; this project's root
 * stands for the release.
 */
export async function runShell(
  script: string,
  env: Record<string, string>,
  check = false,
  cwd?: string,
): Promise<string> {
  const r = await runCommand(
    "timeout",
    ["300", "bash", "-c", `${check ? "" : "set -eo pipefail\n"}${script}\n${check ? "true" : ""}`],
    { env: { ...process.env, ...env }, ...(cwd ? { cwd } : {}) },
  );
  return r.stdout + r.stderr;
}

/** A folder for PATH with the tools a user runs the runbooks with: the given kubectl, the pinned bao. */
export async function toolDir(kubectl: string): Promise<string> {
  const dir = makeTempDir("runbook");
  symlinkSync(kubectl, join(dir, "kubectl"));
  symlinkSync((await ensureBinaries()).baoDefault, join(dir, "bao"));
  return dir;
}
