import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onProcessEnd } from "./hooks.js";

const PREFIX = "testenv-";
const OWNER_FILE = ".owner-pid";
const owned = new Set<string>();
let swept = false;

/** A fresh folder under the OS temp dir, removed at exit unless TESTENV_KEEP_TMP is set. */
export function makeTempDir(name: string): string {
  if (!swept) {
    swept = true;
    sweepAbandoned();
    onProcessEnd("files", removeAllOwned);
  }
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}${name}-`));
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  owned.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  owned.delete(dir);
  remove(dir);
}

function removeAllOwned(): void {
  for (const dir of owned) remove(dir);
  owned.clear();
}

function remove(dir: string): void {
  if ((process.env["TESTENV_KEEP_TMP"] ?? "") !== "") return;
  // Retries cover a just-killed server still flushing a file into the folder.
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

// Folders of a process that was SIGKILLed (no hook could run) are removed by the next run. A folder
// whose owner is unknown or alive is left alone; a reused pid errs on the side of keeping.
function sweepAbandoned(): void {
  if ((process.env["TESTENV_KEEP_TMP"] ?? "") !== "") return;
  let entries: string[] = [];
  try {
    entries = readdirSync(tmpdir()).filter((e) => e.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(tmpdir(), entry);
    try {
      const pid = Number(readFileSync(join(dir, OWNER_FILE), "utf8"));
      if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // No owner file yet, or not ours.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
