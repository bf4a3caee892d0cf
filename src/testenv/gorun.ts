import { spawn } from "node:child_process";
import { trackChild } from "./processes.js";

/**
 * Runs one `go` command (a build or an install into the cache) and fails with the end of its
 * output, which is where Go says what broke.
 */
export async function runGo(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; label: string },
): Promise<void> {
  const child = spawn("go", [...args], {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  trackChild(child, opts.label);
  let err = "";
  child.stderr.on("data", (c: Buffer) => {
    err = (err + c.toString()).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`${opts.label} failed (exit ${code}):\n${err}`);
}
