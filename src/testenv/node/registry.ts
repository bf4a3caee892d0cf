import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { MAX_NODES, type NodeAddresses, nodeAddresses } from "./addresses.js";
import { cgroupPids, removeCgroupRoot } from "./cgroups.js";
import { recordSysctls, restoreSysctls } from "./sysctls.js";

/** Machine-wide bookkeeping of running nodes; /run is a tmpfs, so a reboot forgets them with it. */
export const REGISTRY_DIR = "/run/platform-operator-node";

/** What a node owns on the host, written down so a later run can clean up after a SIGKILLed one. */
export interface NodeRecord {
  index: number;
  ownerPid: number;
  dir: string;
  /** "net:[4026532...]" of the node's network namespace, once it exists. */
  netns?: string;
  /** "mnt:[...]" of the node's private mount namespace. */
  mntns?: string;
  /** Mount points this node had to create on the host (removed again when empty). */
  createdPaths?: string[];
}

const recordPath = (index: number) => join(REGISTRY_DIR, `node-${index}.json`);
/** When a node number was last released: it is not handed out again at once (see claimNode). */
const releasedPath = (index: number) => join(REGISTRY_DIR, `node-${index}.released`);
/** How long a released node number rests while other numbers are free. */
const REST_MS = 120_000;

function justReleased(index: number, now: number): boolean {
  try {
    return now - Number(readFileSync(releasedPath(index), "utf8")) < REST_MS;
  } catch {
    return false;
  }
}

function readRecord(index: number): NodeRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(index), "utf8")) as NodeRecord;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Nodes whose owner still runs, other than node number `except`. */
export function liveNodes(except?: number): NodeRecord[] {
  const out: NodeRecord[] = [];
  for (let i = 0; i < MAX_NODES; i++) {
    const r = readRecord(i);
    if (r && i !== except && isAlive(r.ownerPid)) out.push(r);
  }
  return out;
}

/**
 * Claims the lowest free node number. A record whose owner died (SIGKILL, power cut of the runner)
 * is cleaned up first: its processes killed, its cgroups and veth removed.
 */
export function claimNode(dir: string): NodeAddresses {
  mkdirSync(REGISTRY_DIR, { recursive: true, mode: 0o755 });
  // A number released a moment ago is passed over while others are free: whoever released it may
  // still be checking that nothing under that number is left (a cgroup root, a veth, its record),
  // and a new node under the same number would be taken for a leftover.
  const now = Date.now();
  for (const i of claimOrder(MAX_NODES, (n) => justReleased(n, now))) {
    const existing = readRecord(i);
    if (existing && isAlive(existing.ownerPid)) continue;
    if (existing) teardownNodeSync(existing);
    const record: NodeRecord = { index: i, ownerPid: process.pid, dir };
    try {
      writeFileSync(recordPath(i), JSON.stringify(record), { flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue; // another process was faster
      throw err;
    }
    recordSysctls(REGISTRY_DIR);
    return nodeAddresses(i);
  }
  throw new Error(`all ${MAX_NODES} node numbers are taken by running test environments`);
}

/** Node numbers in the order they are tried: the lowest first, those released a moment ago last. */
export function claimOrder(count: number, resting: (index: number) => boolean): number[] {
  const all = [...Array(count).keys()];
  return [...all.filter((i) => !resting(i)), ...all.filter(resting)];
}

export function updateRecord(record: NodeRecord): void {
  writeFileSync(recordPath(record.index), JSON.stringify(record));
}

/**
 * Process ids in the node's namespaces or cgroups (pods live in their own namespaces, but in its
 * cgroups). A namespace's number is reused once it is freed, so during a teardown a process found
 * only by namespace is the node's only if it started before the teardown did (`startedBy`, in clock
 * ticks since boot) and sits in no other node's cgroup: the node itself starts nothing new while it
 * is being killed, and another node starting beside it may be handed its freed namespace number.
 */
export function nodePids(record: NodeRecord, startedBy?: number): number[] {
  const a = nodeAddresses(record.index);
  const pids = new Set<number>(cgroupPids(a.cgroupRoot));
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid || pids.has(pid)) continue;
    try {
      const inNamespace =
        (record.netns && readlinkSync(`/proc/${pid}/ns/net`) === record.netns) ||
        (record.mntns && readlinkSync(`/proc/${pid}/ns/mnt`) === record.mntns);
      if (!inNamespace) continue;
      if (startedBy !== undefined && !startedBefore(pid, startedBy)) continue;
      if (startedBy !== undefined && otherNodesCgroup(pid, record.index)) continue;
      pids.add(pid);
    } catch {
      // Exited meanwhile.
    }
  }
  return [...pids];
}

/** Clock ticks since boot now, in the unit of /proc/PID/stat's start time (USER_HZ, 100 on Linux). */
export function bootTicksNow(): number {
  return Math.floor(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100);
}

function startedBefore(pid: number, ticks: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[19]) <= ticks;
}

function otherNodesCgroup(pid: number, index: number): boolean {
  const cgroup = /platform-operator-ponode(\d+)(\/|$)/m.exec(readFileSync(`/proc/${pid}/cgroup`, "utf8"));
  return cgroup !== null && Number(cgroup[1]) !== index;
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Ends everything a node left on the host. Synchronous, because it also runs from exit hooks; the
 * graceful path (stop()) has already stopped the components, so this normally finds little.
 * Returns what could not be removed.
 */
export function teardownNodeSync(record: NodeRecord): string[] {
  const a = nodeAddresses(record.index);
  // A killed process can take seconds to finish exiting on a loaded machine (a shim or kubelet with
  // many threads and mappings): keep killing and looking for up to 20 s, not a fixed few rounds.
  const deadline = Date.now() + 20_000;
  const startedBy = bootTicksNow();
  while (Date.now() < deadline) {
    const pids = nodePids(record, startedBy);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    sleepSync(50);
  }
  const problems: string[] = [];
  const left = nodePids(record, startedBy);
  if (left.length > 0) problems.push(`processes still running: ${left.join(", ")}`);
  // A cgroup folder becomes removable a moment after its last process is reaped.
  let cgroupsLeft: string[] = [];
  for (let round = 0; round < 40; round++) {
    cgroupsLeft = removeCgroupRoot(a.cgroupRoot);
    if (cgroupsLeft.length === 0) break;
    sleepSync(50);
  }
  if (cgroupsLeft.length > 0) problems.push(`cgroup folders left: ${cgroupsLeft.join(", ")}`);
  // The veth pair goes with the namespace; this only matters if the namespace outlived its processes.
  try {
    execFileSync("ip", ["link", "del", a.hostVeth], { stdio: "ignore" });
  } catch {
    // Not there: the normal case.
  }
  if (liveNodes(record.index).length === 0) {
    restoreSysctls(REGISTRY_DIR);
    for (const path of record.createdPaths ?? []) {
      try {
        rmdirSync(path);
      } catch {
        // Not empty (someone else uses it) or already gone.
      }
    }
  }
  try {
    unlinkSync(recordPath(record.index));
    writeFileSync(releasedPath(record.index), String(Date.now()));
  } catch {
    // Already released.
  }
  return problems;
}
