import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { clockTicksPerSecond } from "./proc.js";

// CPU seconds of each process a bench runs, phase by phase: what a phase cost the machine, not only
// how long it took. On a shared host wall time moves with other load; CPU seconds much less, and
// their sum over all the processes a phase needs, divided by the cores, is a lower bound on its
// wall time that no scheduling can beat.

/** utime, stime, cutime, cstime (fields 14–17 of /proc/<pid>/stat) in seconds; 0 once it is gone. */
function ownAndReapedCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / clockTicksPerSecond();
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone meanwhile
  }
  return out;
}

/**
 * CPU seconds of `pid` and everything under it: a wrapper (setpriv, nsenter) may have forked the
 * real server, and children it already reaped count through cutime/cstime.
 */
export function treeCpuSeconds(pid: number): number {
  let total = 0;
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    total += ownAndReapedCpu(p);
    queue.push(...childrenOf(p));
  }
  return total;
}

/** CPU seconds the whole host has been busy (all cores, every process, ours and others'). */
export function hostBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
  // cpu user nice system idle iowait irq softirq steal ...: everything but idle and iowait.
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / clockTicksPerSecond();
}

export interface CpuSample {
  at: number;
  cpu: Record<string, number>;
  host: number;
}

export interface PhaseCpu {
  phase: string;
  wall: number;
  /** CPU seconds by process label over the phase. */
  cpu: Record<string, number>;
  /** The host's busy CPU seconds over the phase, every process on the machine. */
  host: number;
  loadavg: string;
}

/** The bench's own process: its CPU is the plain client's during a floor. */
export const SELF = "bench (client)";

/**
 * Samples the labelled processes; a label whose pid is undefined (not started yet, or stopped)
 * counts 0, so a phase that starts a process counts all of its CPU.
 */
export function sampleCpu(pids: Record<string, number | undefined>): CpuSample {
  const cpu: Record<string, number> = {};
  for (const [label, pid] of Object.entries(pids)) cpu[label] = pid === undefined ? 0 : treeCpuSeconds(pid);
  const self = process.cpuUsage();
  cpu[SELF] = (self.user + self.system) / 1e6;
  return { at: performance.now(), cpu, host: hostBusySeconds() };
}

export function phaseCpu(phase: string, from: CpuSample, to: CpuSample): PhaseCpu {
  const cpu: Record<string, number> = {};
  for (const label of Object.keys(to.cpu)) cpu[label] = Math.max(0, to.cpu[label]! - (from.cpu[label] ?? 0));
  return {
    phase,
    wall: (to.at - from.at) / 1000,
    cpu,
    host: to.host - from.host,
    loadavg: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
  };
}

export const cores = availableParallelism();

/** Sum of the CPU seconds of `labels` over a phase. */
export const cpuOf = (p: PhaseCpu, labels: string[]) => labels.reduce((a, l) => a + (p.cpu[l] ?? 0), 0);
