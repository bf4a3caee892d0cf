import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
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
 * that a later run would trust. Runs that want the same entry at once (two clones testing on one
 * machine) take turns on a lock folder: the second waits and finds the entry the first built,
 * instead of building it a second time. A lock whose process is gone is taken over.
 */
export async function populateAtomically(
  finalDir: string,
  fill: (scratchDir: string) => Promise<void>,
  opts: { pollMs?: number; onWait?: (holder: number) => void } = {},
): Promise<void> {
  await mkdir(dirname(finalDir), { recursive: true });
  const lock = `${finalDir}.lock`;
  let told = false;
  for (;;) {
    if (await exists(finalDir)) return;
    const holder = await takeLock(lock);
    if (holder === undefined) break;
    if (!told) opts.onWait?.(holder);
    told = true;
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
  }
  try {
    // Built while this run waited for the lock of another entry's holder, or by the last holder.
    if (await exists(finalDir)) return;
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
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Takes the lock folder (mkdir is atomic): undefined when taken, else the pid of the live process
 * holding it. A lock left by a process that is gone (or whose owner never wrote its pid within a
 * minute) is removed and tried again.
 */
async function takeLock(lock: string): Promise<number | undefined> {
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(`${lock}/pid`, String(process.pid));
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = Number((await readFile(`${lock}/pid`, "utf8").catch(() => "")).trim());
    if (pid > 0 && alive(pid)) return pid;
    const age = await stat(lock).then(
      (st) => Date.now() - st.mtimeMs,
      () => 0,
    );
    if (pid > 0 || age > 60_000) await rm(lock, { recursive: true, force: true });
    else return 0;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Writes a small file whole or not at all: a reader never sees half of it. */
export function writeFileAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const scratch = `${path}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
  writeFileSync(scratch, text);
  renameSync(scratch, path);
}
