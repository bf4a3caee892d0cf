import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Every file below `dir`, as absolute paths. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? listFiles(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]),
    ),
  );
  return nested.flat();
}

/**
 * A short content hash of the named files (paths relative to `dir`, names and contents both count)
 * plus `extra`, used to key cached builds: anything that changes what is built changes the key.
 */
export async function hashFiles(dir: string, relativePaths: string[], extra = ""): Promise<string> {
  const hash = createHash("sha256");
  for (const file of [...relativePaths].sort()) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(dir, file)));
    hash.update("\0");
  }
  hash.update(extra);
  return hash.digest("hex").slice(0, 12);
}
