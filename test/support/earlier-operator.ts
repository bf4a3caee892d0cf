import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { populateAtomically } from "../../src/testenv/atomic.js";
import { cacheRoot } from "../../src/testenv/cache.js";
import { runCommand } from "../../src/testenv/exec.js";

/** The last commit whose generated names were the project's own (`<name>-internal`, Service `<name>`, …). */
export const BEFORE_UPSTREAM_NAMES = "390d97521a4966211708731a817f247986397252";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The operator as an earlier commit of this repository built it, for tests that upgrade a cluster
 * it made. Compiled once per commit into the shared cache (sources from `git archive`, so a dirty
 * work tree does not leak in); each call gets its own copy beside this checkout's node_modules (the
 * cache must not point into a clone that goes away). Returns the copy's cli/main.js.
 */
export async function earlierOperator(commit: string): Promise<string> {
  await runCommand("git", ["-C", REPO, "cat-file", "-e", `${commit}^{commit}`]).catch(() => {
    throw new Error(`commit ${commit} is not in this clone (a shallow clone?): the migration test builds it`);
  });
  const built = join(cacheRoot(), `earlier-operator-${commit}`);
  await populateAtomically(built, async (scratch) => {
    const tar = join(scratch, "src.tar");
    await runCommand("git", [
      "-C",
      REPO,
      "archive",
      "-o",
      tar,
      commit,
      "src",
      "deploy",
      "package.json",
      "tsconfig.json",
    ]);
    await runCommand("tar", ["-xf", tar, "-C", scratch]);
    await rm(tar);
    await writeFile(
      join(scratch, "tsconfig.build.json"),
      JSON.stringify({ extends: "./tsconfig.json", include: ["src"] }),
    );
    await symlink(join(REPO, "node_modules"), join(scratch, "node_modules"));
    try {
      await runCommand(process.execPath, [
        join(REPO, "node_modules/typescript/bin/tsc"),
        "-p",
        join(scratch, "tsconfig.build.json"),
      ]);
    } finally {
      await rm(join(scratch, "node_modules"));
    }
    await rm(join(scratch, "src"), { recursive: true });
  });
  const copy = await mkdtemp(join(tmpdir(), "earlier-operator-"));
  await cp(built, copy, { recursive: true });
  await mkdir(join(copy, "dist"), { recursive: true });
  await symlink(join(REPO, "node_modules"), join(copy, "node_modules"));
  return join(copy, "dist/src/cli/main.js");
}
