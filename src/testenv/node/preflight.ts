import { existsSync, readFileSync } from "node:fs";
import { commandWorks } from "../exec.js";
import { cgroupHierarchies } from "./cgroups.js";

/**
 * What this machine lacks to run a node, each as a sentence saying exactly what is missing; empty
 * when everything is there.
 */
export async function nodePrerequisites(): Promise<string[]> {
  const missing: string[] = [];
  if (process.platform !== "linux") return [`a node needs Linux; this is ${process.platform}`];
  if (process.getuid?.() !== 0) {
    missing.push(
      "root: the node creates network and mount namespaces, cgroups and iptables rules (run the tests as root)",
    );
  }
  for (const [command, args, pkg] of [
    ["unshare", ["--version"], "util-linux"],
    ["nsenter", ["--version"], "util-linux"],
    ["ip", ["-V"], "iproute2"],
    ["iptables", ["--version"], "iptables"],
    ["openssl", ["version"], "openssl"],
  ] as const) {
    if (!(await commandWorks(command, [...args])))
      missing.push(`the ${command} command (Debian package ${pkg})`);
  }
  if (!existsSync("/proc/self/ns/net") || !existsSync("/proc/self/ns/mnt")) {
    missing.push("kernel support for network and mount namespaces (CONFIG_NET_NS, /proc/self/ns/net)");
  }
  const filesystems = readFileSync("/proc/filesystems", "utf8");
  if (!/\toverlay\n/.test(filesystems)) {
    missing.push("the overlay filesystem (modprobe overlay), used by containerd's snapshotter");
  }
  if (cgroupHierarchies().length === 0) missing.push("a mounted cgroup filesystem under /sys/fs/cgroup");
  return missing;
}
