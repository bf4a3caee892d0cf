import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../exec.js";
import { type ServiceProcess, startService } from "../processes.js";
import { waitUntil } from "../wait.js";
import type { NodeAddresses } from "./addresses.js";

// Paths kubelet, containerd and the CNI plugins hard-code. Inside the node's mount namespace each
// gets a private tmpfs, so two nodes (or a node and the machine itself) never share them; the host
// keeps at most the empty folders the mounts sit on.
export const PRIVATE_PATHS = [
  "/var/lib/kubelet",
  "/var/log/containers",
  "/var/log/pods",
  "/run/containerd",
  "/var/lib/cni",
  "/run/netns",
] as const;

export interface NodeNamespaces {
  /** The process holding both namespaces open; every node component joins it with nsenter. */
  anchor: ServiceProcess;
  netns: string;
  mntns: string;
  /** Prefix that runs a command inside the node: its network and mount namespace, cwd `dir`. */
  enter(dir: string): string[];
}

/**
 * Creates the node's network namespace (only loopback; no route anywhere) and private mount namespace,
 * held open by one sleeping process. No `ip netns add`: that would leave a bind mount on the host.
 */
export async function createNamespaces(dir: string): Promise<NodeNamespaces> {
  const mounts = PRIVATE_PATHS.map((p) => `mkdir -p ${p} && mount -t tmpfs -o mode=0755 tmpfs ${p}`);
  // Slave propagation keeps the host's later mounts visible without ours leaking back; rshared on /
  // inside is what kubelet and runc expect for volume mount propagation.
  const script = ["set -e", "ip link set lo up", ...mounts, "mount --make-rshared /", "exec sleep infinity"];
  const anchor = await startService({
    name: "node-namespaces",
    command: "unshare",
    args: ["--net", "--mount", "--propagation", "slave", "--", "/bin/sh", "-c", script.join("\n")],
    logPath: join(dir, "namespaces.log"),
    cwd: dir,
  });
  let netns = "";
  let mntns = "";
  const self = readlinkSync("/proc/self/ns/mnt");
  await waitUntil(
    async () => {
      netns = readlinkSync(`/proc/${anchor.pid}/ns/net`);
      mntns = readlinkSync(`/proc/${anchor.pid}/ns/mnt`);
      // The anchor execs into sleep only after its mounts are in place.
      const comm = readFileSync(`/proc/${anchor.pid}/comm`, "utf8").trim();
      return mntns !== self && comm === "sleep";
    },
    { what: "the node's namespaces", timeoutMs: 10_000, intervalMs: 20, service: anchor },
  );
  return {
    anchor,
    netns,
    mntns,
    enter: (cwd) => ["nsenter", "-t", String(anchor.pid), "-n", "-m", `--wd=${cwd}`, "--"],
  };
}

/**
 * Connects the node to the host with a veth pair in a /30 of its own and routes the node's pod and
 * Service ranges through it. The node gets no default route: a packet for any other address has
 * nowhere to go.
 */
export async function connectNode(ns: NodeNamespaces, a: NodeAddresses): Promise<void> {
  const inNode = ["-t", String(ns.anchor.pid), "-n", "--", "ip"];
  const ip = (...args: string[]) => runCommand("ip", args);
  const nodeIp = (...args: string[]) => runCommand("nsenter", [...inNode, ...args]);
  await ip(
    "link",
    "add",
    a.hostVeth,
    "type",
    "veth",
    "peer",
    "name",
    a.nodeVeth,
    "netns",
    String(ns.anchor.pid),
  );
  await ip("addr", "add", `${a.hostIp}/${a.vethPrefix}`, "dev", a.hostVeth);
  await ip("link", "set", a.hostVeth, "up");
  await nodeIp("addr", "add", `${a.nodeIp}/${a.vethPrefix}`, "dev", a.nodeVeth);
  await nodeIp("link", "set", a.nodeVeth, "up");
  for (const range of [a.podCidr, a.serviceCidr]) {
    await ip("route", "add", range, "via", a.nodeIp, "dev", a.hostVeth, "src", a.hostIp);
  }
  // A process in the node (not in a pod) connecting to a Service address needs some route to exist
  // before kube-proxy's DNAT can redirect the packet to a pod; without a default route there is none.
  // Through loopback, an address nothing answers for goes nowhere.
  await nodeIp("route", "add", a.serviceCidr, "dev", "lo", "src", a.nodeIp);
}
