import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";

// What each test file's processes cost in CPU (test/support/file-cpu.ts writes one JSON line per
// file process): the runner prints the costliest, so the suite's time is cut where the CPU goes.

export interface FileCpu {
  file: string;
  self: number;
  children: number;
  wall: number;
}

export function readFileCpu(path: string): FileCpu[] {
  if (!existsSync(path)) return [];
  const out: FileCpu[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as Partial<FileCpu>;
      if (typeof v.file === "string" && typeof v.self === "number" && typeof v.children === "number")
        out.push({
          file: v.file,
          self: v.self,
          children: v.children,
          wall: typeof v.wall === "number" ? v.wall : 0,
        });
    } catch {
      // A torn line (a process killed while writing) is skipped.
    }
  }
  return out;
}

/** Lines for the log: the total, then the `top` files by CPU with their wall time. */
export function describeFileCpu(rows: readonly FileCpu[], root: string, top = 12): string[] {
  if (rows.length === 0) return [];
  const cpu = (r: FileCpu) => r.self + r.children;
  const total = rows.reduce((s, r) => s + cpu(r), 0);
  const lines = [`test files' own processes used ${Math.round(total)} CPU-seconds; the costliest:`];
  for (const r of [...rows].sort((a, b) => cpu(b) - cpu(a)).slice(0, top))
    lines.push(
      `  ${cpu(r).toFixed(1).padStart(6)} s CPU (${r.self.toFixed(1)} file + ${r.children.toFixed(1)} children) in ${Math.round(r.wall)} s  ${relative(root, r.file)}`,
    );
  return lines;
}
