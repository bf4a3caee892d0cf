import { existsSync, readFileSync } from "node:fs";
import { commandWorks } from "../exec.js";
import { ensureAptPackages } from "./apt.js";
import { cgroupHierarchies } from "./cgroups.js";
import { NODE_APT_PACKAGES } from "./versions.js";

/** Commands the node runs on the host, each with the Debian package that brings it. */
const HOST_COMMANDS = [
  ["unshare", ["--version"], "util-linux"],
  ["nsenter", ["--version"], "util-linux"],
  ["ip", ["-V"], "iproute2"],
  ["iptables", ["--version"], "iptables"],
  ["openssl", ["version"], "openssl"],
] as const;

/**
 * Installs what the node needs from Debian (a fresh machine of this kind has no iptables, nft or
 * conntrack), then says what the machine still lacks. Only root on Linux installs anything; anyone
 * else is told what is missing, as by nodePrerequisites.
 */
export async function ensureNodeHost(onProgress: (line: string) => void): Promise<string[]> {
  if (process.platform === "linux" && process.getuid?.() === 0) {
    const packages = new Set<string>([...HOST_COMMANDS.map(([, , pkg]) => pkg), ...NODE_APT_PACKAGES]);
    await ensureAptPackages([...packages], onProgress);
  }
  return nodePrerequisites();
}

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
  for (const [command, args, pkg] of HOST_COMMANDS) {
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
