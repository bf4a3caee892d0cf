import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Walks up from this module to the folder holding test/env/go.mod, so the answer is the same whether
 * the code runs compiled (dist/src/testenv) or from source, and however deep dist is nested.
 */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "test", "env", "go.mod"))) return dir;
    const parent = resolve(dir, "..");
    if (parent === dir) {
      throw new Error(`cannot find test/env/go.mod above ${dirname(fileURLToPath(import.meta.url))}`);
    }
    dir = parent;
  }
}

export function goModuleDir(): string {
  return join(repoRoot(), "test", "env");
}
