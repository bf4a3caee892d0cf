import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

// What /proc says about a process the benches started: its CPU time, read the same way by each.

let ticksPerSecond: number | undefined;
/** The kernel's clock ticks per second, the unit of /proc's CPU times. */
export function clockTicksPerSecond(): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  return ticksPerSecond;
}

/** User + system CPU seconds of `pid` so far (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond();
}
