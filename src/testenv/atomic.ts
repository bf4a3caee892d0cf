import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Fills `finalDir` by letting `fill` write into a sibling scratch folder that is renamed into place
 * only once complete: an interrupted build leaves scratch behind, never a half-filled cache entry
 * that a later run would trust.
 */
export async function populateAtomically(
  finalDir: string,
  fill: (scratchDir: string) => Promise<void>,
): Promise<void> {
  await mkdir(dirname(finalDir), { recursive: true });
  const scratch = `${finalDir}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
  await mkdir(scratch, { recursive: true });
  try {
    await fill(scratch);
    try {
      await rename(scratch, finalDir);
    } catch (err) {
      // Another process finished the same entry first; theirs is as good as ours.
      if (!(await exists(finalDir))) throw err;
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Writes a small file whole or not at all: a reader never sees half of it. */
export function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const scratch = `${path}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
  writeFileSync(scratch, text);
  renameSync(scratch, path);
}
