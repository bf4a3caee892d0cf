import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { KUBERNETES_VERSION } from "./cache.js";
import { formatDuration } from "./duration.js";
import { hashFiles, listFiles } from "./filehash.js";
import { goModuleDir } from "./paths.js";
import { trackChild } from "./processes.js";
import type { Progress } from "./progress.js";

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
  const commands = (await listFiles(join(dir, "cmd"))).map((f) => relative(dir, f));
  return hashFiles(dir, ["go.mod", "go.sum", ...commands], ldflags());
}

/**
 * Reads what Go prints while it fetches and builds, and says where the build is: downloading
 * modules (`go mod download -x` logs each fetch), compiling (`go build -v` names each package it
 * compiles; cache hits stay silent, so the count can stay under the total), linking (a command's
 * own package is compiled last, right before its link).
 */
export class GoBuildProgress {
  phase: "downloading" | "compiling" = "downloading";
  fetched = 0;
  compiled = 0;
  /** Packages the build depends on, from `go list -deps`; 0 until known. */
  total = 0;
  readonly linking: string[] = [];

  constructor(private readonly commands: ReadonlyMap<string, string>) {}

  feedDownload(line: string): void {
    if (/^# get \S+\.zip: 200\b/.test(line.trim())) this.fetched++;
  }

  feedBuild(line: string): void {
    const pkg = line.trim();
    // Package paths have no spaces; compiler diagnostics do.
    if (pkg === "" || pkg.includes(" ")) return;
    this.phase = "compiling";
    this.compiled++;
    const command = this.commands.get(pkg);
    if (command && !this.linking.includes(command)) this.linking.push(command);
  }

  describe(elapsedMs: number): string {
    const elapsed = formatDuration(elapsedMs);
    if (this.phase === "downloading")
      return `go: downloading modules, ${this.fetched} fetched, ${elapsed} elapsed`;
    // With a warm build cache nothing is printed and the time goes into the links.
    if (this.compiled === 0) return `go build: all packages cached so far, linking, ${elapsed} elapsed`;
    const of = this.total > 0 ? ` of up to ${this.total}` : "";
    const linking = this.linking.length > 0 ? `, linking ${this.linking.join(", ")}` : "";
    return `go build: compiling, ${this.compiled}${of} packages${linking}, ${elapsed} elapsed`;
  }
}

/** The module's command packages by import path (`<module>/cmd/<name>`), for spotting the link step. */
async function commandPackages(cwd: string): Promise<Map<string, string>> {
  const mod = /^module\s+(\S+)/m.exec(await readFile(join(cwd, "go.mod"), "utf8"))?.[1] ?? "";
  return new Map(KUBERNETES_COMMANDS.map((c) => [`${mod}/cmd/${c}`, c]));
}

/** Feeds each complete line of a child's output to `feed`. */
function eachLine(stream: NodeJS.ReadableStream, feed: (line: string) => void, recent: string[]): void {
  let rest = "";
  stream.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      feed(line);
      recent.push(line);
      if (recent.length > 40) recent.shift();
    }
  });
}

async function runGo(
  args: string[],
  cwd: string,
  feed: { stdout: (line: string) => void; stderr: (line: string) => void },
  what: string,
): Promise<void> {
  const child = spawn("go", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child, what);
  const recent: string[] = [];
  eachLine(child.stdout, feed.stdout, recent);
  eachLine(child.stderr, feed.stderr, recent);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", (e) => reject(new Error(`cannot run go (is Go installed?): ${e.message}`)));
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`${what} in ${cwd} failed (exit ${code}):\n${recent.join("\n")}`);
}

/** Downloads the modules, then builds the three commands into `outDir`, reporting as it goes. */
export async function buildKubernetes(outDir: string, progress: Progress): Promise<void> {
  const cwd = goModuleDir();
  const started = Date.now();
  const state = new GoBuildProgress(await commandPackages(cwd));
  const report = () => progress.status(state.describe(Date.now() - started));
  // A status at least every second on a terminal; the Progress throttles it for plain logs.
  const ticker = setInterval(report, 1000);
  try {
    report();
    // Listing the build's packages fetches exactly the modules the build needs (`go mod download`
    // would fetch every platform's), logs each fetch under -x, and gives the package total.
    let total = 0;
    await runGo(
      ["list", "-x", "-deps", "./cmd/..."],
      cwd,
      { stdout: () => total++, stderr: (l) => state.feedDownload(l) },
      "go list",
    );
    state.total = total;
    if (state.fetched > 0) {
      progress.done();
      progress.line(`go: downloaded ${state.fetched} modules in ${formatDuration(Date.now() - started)}`);
    }
    state.phase = "compiling";
    const feed = (l: string) => state.feedBuild(l);
    await runGo(goBuildArgs(outDir), cwd, { stdout: feed, stderr: feed }, "go build");
  } finally {
    clearInterval(ticker);
    progress.done();
  }
}
