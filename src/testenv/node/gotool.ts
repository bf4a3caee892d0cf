import { spawn } from "node:child_process";
import { formatDuration } from "../duration.js";
import { trackChild } from "../processes.js";

export interface GoRun {
  /** What is being built, for progress lines, e.g. "runc v1.5.3". */
  label: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  onProgress: (line: string) => void;
}

/**
 * Runs one `go build -v` / `go install -v`, reporting every 5 s how many packages were compiled
 * (Go prints a package path per compiled package; cache hits stay silent), and failing with the
 * end of Go's output.
 */
export async function runGo(run: GoRun): Promise<void> {
  const started = Date.now();
  const child = spawn("go", run.args, {
    cwd: run.cwd,
    env: { ...process.env, ...run.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  trackChild(child, `go (${run.label})`);
  let compiled = 0;
  const recent: string[] = [];
  const remember = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      if (!line.includes(" ")) compiled++;
      recent.push(line);
      if (recent.length > 40) recent.shift();
    }
  };
  child.stdout.on("data", remember);
  child.stderr.on("data", remember);
  const ticker = setInterval(
    () =>
      run.onProgress(
        `${run.label}: ${compiled} packages compiled, ${formatDuration(Date.now() - started)} elapsed`,
      ),
    5000,
  );
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", (e) => reject(new Error(`cannot run go (is Go installed?): ${e.message}`)));
      child.once("close", resolve);
    });
    if (code !== 0) {
      throw new Error(`building ${run.label} failed (go exit ${code}):\n${recent.join("\n")}`);
    }
  } finally {
    clearInterval(ticker);
  }
}
