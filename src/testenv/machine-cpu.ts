import { readFileSync } from "node:fs";
import { cpus } from "node:os";

// How busy the whole machine was while the tests ran, from the kernel's own counters. The suite's
// time on a 2-core machine depends on whether its files wait (then more may run at once) or compute
// (then only less work shortens it): the run prints which, so the next change to the test order or
// concurrency is decided from a number rather than a guess.

/** Jiffies since boot, summed over all CPUs: busy (user, nice, system, irq, softirq, steal) and idle (idle, iowait). */
export interface CpuTimes {
  busy: number;
  idle: number;
  iowait: number;
}

/** Reads the aggregate `cpu` line of /proc/stat; undefined where there is none (not Linux). */
export function readCpuTimes(path = "/proc/stat"): CpuTimes | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  return parseCpuLine(text.split("\n").find((l) => l.startsWith("cpu ")) ?? "");
}

export function parseCpuLine(line: string): CpuTimes | undefined {
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  if (f.length < 5 || f.some((n) => !Number.isFinite(n))) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  return { busy: user + nice + system + irq + softirq + steal, idle: idle + iowait, iowait };
}

/** One line saying how much of the machine's CPU the interval used. */
export function describeCpu(start: CpuTimes, end: CpuTimes, cores = cpus().length): string {
  const busy = end.busy - start.busy;
  const idle = end.idle - start.idle;
  const total = busy + idle;
  if (total <= 0) return "CPU: no time passed";
  const pct = (n: number) => `${Math.round((100 * n) / total)}%`;
  // USER_HZ is 100 on every Linux the suite runs on: jiffies / 100 = seconds.
  return (
    `CPU over the run: ${pct(busy)} busy, ${pct(idle)} idle (${pct(end.iowait - start.iowait)} waiting on I/O) ` +
    `of ${cores} cores; ${Math.round(busy / 100)} CPU-seconds used`
  );
}
