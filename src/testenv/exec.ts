import { spawn } from "node:child_process";
import { trackChild } from "./processes.js";

export interface CommandResult {
  stdout: string;
  stderr: string;
}

/** Runs a short command to completion; a failure names the command and shows the end of its stderr. */
export function runCommand(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    trackChild(child, command);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on("data", (b: Buffer) => out.push(b));
    child.stderr!.on("data", (b: Buffer) => err.push(b));
    child.once("error", (e) => reject(new Error(`cannot run ${command}: ${e.message}`)));
    child.once("close", (code, signal) => {
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err).toString("utf8");
      if (code === 0) {
        resolve({ stdout, stderr });
        return;
      }
      const tail = stderr.trim().split("\n").slice(-15).join("\n");
      reject(new Error(`${command} ${args[0] ?? ""} failed (${signal ?? `exit ${code}`}):\n${tail}`));
    });
    if (child.stdin) {
      // A command that exits without reading its input must not crash us with EPIPE.
      child.stdin.on("error", () => {});
      child.stdin.end(opts.input);
    }
  });
}

export async function commandWorks(command: string, args: string[]): Promise<boolean> {
  try {
    await runCommand(command, args);
    return true;
  } catch {
    return false;
  }
}
