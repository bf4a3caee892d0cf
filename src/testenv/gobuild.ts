import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { KUBERNETES_VERSION } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runCommand } from "./exec.js";
import { goModuleDir } from "./paths.js";
import { trackChild } from "./processes.js";

export const KUBERNETES_COMMANDS = ["kube-apiserver", "kube-controller-manager", "etcd"] as const;

// A plain `go build` of the module leaves the version at "v0.0.0-master"; the release scripts stamp
// it through these variables, and clients (and our tests) read it back from /version.
function ldflags(): string {
  const [major, minor] = KUBERNETES_VERSION.replace(/^v/, "").split(".");
  const pkg = "k8s.io/component-base/version";
  return [
    "-s",
    "-w",
    `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ].join(" ");
}

export function goBuildArgs(outDir: string): string[] {
  return [
    "build",
    "-v",
    "-trimpath",
    "-buildvcs=false",
    `-ldflags=${ldflags()}`,
    "-o",
    `${outDir}/`,
    "./cmd/...",
  ];
}

/** Identifies a build: anything that changes the binaries changes the hash, hence the cache folder. */
export async function goModuleHash(): Promise<string> {
  const dir = goModuleDir();
  const hash = createHash("sha256");
  const files = ["go.mod", "go.sum", ...(await listFiles(join(dir, "cmd"))).map((f) => relative(dir, f))];
  for (const file of files.sort()) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(dir, file)));
    hash.update("\0");
  }
  hash.update(ldflags());
  return hash.digest("hex").slice(0, 12);
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? listFiles(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]),
    ),
  );
  return nested.flat();
}

/**
 * Builds the three commands into `outDir`. `go build -v` names each package it compiles (cache hits
 * stay silent), which gives a useful progress count against the module's dependency total.
 */
export async function buildKubernetes(outDir: string, onProgress: (line: string) => void): Promise<void> {
  const cwd = goModuleDir();
  const started = Date.now();
  let total = 0;
  runCommand("go", ["list", "-deps", "./cmd/..."], { cwd })
    .then((r) => {
      total = r.stdout.split("\n").filter((l) => l.trim() !== "").length;
    })
    .catch(() => {
      // Only the denominator of the progress line is lost.
    });

  const child = spawn("go", goBuildArgs(outDir), { cwd, stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child, "go build");
  let compiled = 0;
  const recent: string[] = [];
  const remember = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      // Package paths have no spaces; compiler diagnostics do.
      if (!line.includes(" ")) compiled++;
      recent.push(line);
      if (recent.length > 40) recent.shift();
    }
  };
  child.stdout.on("data", remember);
  child.stderr.on("data", remember);

  const report = () => {
    // Packages found in Go's build cache are not rebuilt and not printed, so the count can stay low.
    const of = total > 0 ? ` of up to ${total}` : "";
    onProgress(
      `go build: ${compiled}${of} packages compiled, ${formatDuration(Date.now() - started)} elapsed`,
    );
  };
  const ticker = setInterval(report, 5000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", (e) => reject(new Error(`cannot run go (is Go installed?): ${e.message}`)));
      child.once("close", resolve);
    });
    if (code !== 0) throw new Error(`go build in ${cwd} failed (exit ${code}):\n${recent.join("\n")}`);
  } finally {
    clearInterval(ticker);
  }
  report();
}
