import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { writeFileAtomic } from "./atomic.js";

/**
 * The order test files start in. With a fixed number running at once, a slow file started last
 * keeps the run going alone at the end; started first, it overlaps the many short ones. Durations
 * come from earlier runs (by path under `root`); a file never timed goes first, since it may be slow,
 * and ties keep the given order.
 */
export function slowestFirst(
  files: readonly string[],
  root: string,
  known: Record<string, number>,
): string[] {
  const seconds = (f: string) => known[relative(root, f)] ?? Number.POSITIVE_INFINITY;
  return files
    .map((f, i) => ({ f, i, s: seconds(f) }))
    .sort((a, b) => (a.s === b.s ? a.i - b.i : b.s - a.s))
    .map((x) => x.f);
}

/** Durations kept from earlier runs; an unreadable or foreign file counts as none. */
export function readDurations(path: string): Record<string, number> {
  if (!existsSync(path)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === "number" && e[1] >= 0),
    );
  } catch {
    return {};
  }
}

/**
 * Folds one run's report (the reporter's JSON, absolute paths) into the kept durations, keyed by
 * path under `root`. Files this run did not time keep their earlier numbers.
 */
export function mergeDurations(keptPath: string, reportText: string, root: string): Record<string, number> {
  const kept = readDurations(keptPath);
  let report: Record<string, unknown> = {};
  try {
    report = JSON.parse(reportText.trim() || "{}") as Record<string, unknown>;
  } catch {
    return kept;
  }
  for (const [file, s] of Object.entries(report))
    if (typeof s === "number" && !relative(root, file).startsWith("..")) kept[relative(root, file)] = s;
  writeFileAtomic(keptPath, `${JSON.stringify(kept, null, 1)}\n`);
  return kept;
}
