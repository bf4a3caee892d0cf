import { type ChildProcess, spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { BAO_WRITES_PRELOAD, type BaoWriteRecorder } from "../faults/bao-recorder.js";

/**
 * A stand-in operator (a node `-e` script) under the campaign's OpenBao-writes preload, reporting
 * to `recorder`, its OpenBao on `baoPort` (given to the preload and to the script). Stdout is piped
 * for the caller to read; stdin is piped when the script waits for a command.
 */
export function spawnPreloaded(
  script: string,
  recorder: BaoWriteRecorder,
  baoPort: number,
  stdin: "pipe" | "ignore" = "ignore",
): ChildProcess & { stdout: NonNullable<ChildProcess["stdout"]> } {
  const child = spawn(process.execPath, ["--import", pathToFileURL(BAO_WRITES_PRELOAD).href, "-e", script], {
    env: {
      ...process.env,
      FAULTS_BAO_RECORDER: recorder.url,
      FAULTS_BAO_PORT: String(baoPort),
      BAO_PORT: String(baoPort),
    },
    stdio: [stdin, "pipe", "inherit"],
  });
  return child as ChildProcess & { stdout: NonNullable<ChildProcess["stdout"]> };
}
