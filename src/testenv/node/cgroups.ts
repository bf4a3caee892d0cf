import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";

const CGROUP_FS = "/sys/fs/cgroup";

/** Mount points of the cgroup v1 hierarchies (and cgroup2 when the machine runs it). */
export function cgroupHierarchies(): string[] {
  const mounts = readFileSync("/proc/self/mounts", "utf8").split("\n");
  return mounts
    .map((line) => line.split(" "))
    .filter((f) => (f[2] === "cgroup" || f[2] === "cgroup2") && f[1]?.startsWith(CGROUP_FS))
    .map((f) => f[1]!);
}

/** Creates the node's cgroup root in every hierarchy (kubelet refuses a cgroupRoot that is missing). */
export function createCgroupRoot(root: string): void {
  for (const hierarchy of cgroupHierarchies()) mkdirSync(join(hierarchy, root), { recursive: true });
}

/** Folders of `root` that still exist, deepest first. */
export function cgroupFolders(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
    }
    found.push(dir);
  };
  for (const hierarchy of cgroupHierarchies()) {
    const dir = join(hierarchy, root);
    if (existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
  }
  return found;
}

/** Process ids in `root` or below, in any hierarchy. */
export function cgroupPids(root: string): number[] {
  const pids = new Set<number>();
  for (const dir of cgroupFolders(root)) {
    try {
      for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n")) {
        const pid = Number(line);
        if (pid > 0) pids.add(pid);
      }
    } catch {
      // Removed while we read.
    }
  }
  return [...pids];
}

/** Removes `root` and everything below it; a folder still holding a process stays (and is returned). */
export function removeCgroupRoot(root: string): string[] {
  const left: string[] = [];
  for (const dir of cgroupFolders(root)) {
    try {
      rmdirSync(dir);
    } catch {
      left.push(dir);
    }
  }
  return left;
}
