import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cgroupFolders } from "../../src/testenv/node/cgroups.js";
import { type LocalNode, startNode } from "../../src/testenv/node/node.js";
import { liveNodes, nodePids, REGISTRY_DIR } from "../../src/testenv/node/registry.js";
import { sharedNode } from "../../src/testenv/node/shared.js";
import {
  KUBELET_SYSCTLS,
  readSysctl,
  recordSysctls,
  restoreSysctls,
  savedSysctls,
} from "../../src/testenv/node/sysctls.js";
import { waitUntil } from "../../src/testenv/wait.js";
import { BUSYBOX } from "../support/node.js";

// A private node of this file's own (next to the shared one): its kubelet and containerd are restarted
// under running pods, then it is torn down and the host is checked for anything left behind.

interface HostSnapshot {
  mounts: string[];
  links: string[];
  routes: string[];
  iptables: string;
  nft: string;
  sysctls: Record<string, string>;
  savedSysctls: Record<string, string> | undefined;
}

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: "utf8" });

// Other nodes (a concurrent test run, npm start --node) may come and go meanwhile; their veths and
// routes are theirs. Everything else on the host must be exactly as before.
const otherNode = (index: number) => (text: string) => {
  const m = /ponode(\d+)h/.exec(text);
  return m !== null && Number(m[1]) !== index;
};

function snapshotHost(index: number): HostSnapshot {
  const foreign = otherNode(index);
  return {
    // Mount point and filesystem type of every mount the host (this process) sees.
    mounts: readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const f = l.split(" ");
        return `${f[4]} ${f[f.indexOf("-") + 1]}`;
      })
      .sort(),
    links: sh("ip", ["-o", "link", "show"])
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(":")[1]!.trim().split("@")[0]!)
      .filter((l) => !foreign(l))
      .sort(),
    routes: sh("ip", ["route", "show"])
      .split("\n")
      .filter((l) => l && !foreign(l))
      .sort(),
    // Counters change with traffic; the rules are what matters.
    iptables: sh("iptables-save", [])
      .split("\n")
      .filter((l) => !l.startsWith("#"))
      .map((l) => l.replace(/\[\d+:\d+\]/g, ""))
      .join("\n"),
    nft: sh("nft", ["list", "ruleset"]).replace(/counter packets \d+ bytes \d+/g, "counter"),
    sysctls: Object.fromEntries(KUBELET_SYSCTLS.map((k) => [k, readSysctl(k)])),
    savedSysctls: savedSysctls(REGISTRY_DIR),
  };
}

describe("node: restarts and teardown", () => {
  let node: LocalNode;
  let before_: HostSnapshot;
  let kubectl: (args: string[], input?: string) => Promise<string>;

  before(async () => {
    // The shared node must be settled first, or its own veth and routes would show up as changes.
    await sharedNode().catch(() => {});
    // The number this node will get is only known once it starts; others' objects are filtered by
    // number, so the snapshot is retaken with it below (ours did not exist before).
    before_ = snapshotHost(-1);
    node = await startNode({ log: (l) => console.log(`# ${l}`) });
    kubectl = node.kubectl;
    await kubectl(["wait", "--for=create", "serviceaccount/default", "--timeout=120s"]);
  });
  after(async () => {
    // Only if a test failed before the teardown test ran.
    if (node) await node.stop();
  });

  const pod = (name: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: "main",
          image: BUSYBOX,
          command: ["sh", "-c", "echo started > /tmp/marker; exec sleep 3600"],
        },
      ],
    },
  });
  const containerState = async (name: string) => {
    const p = JSON.parse(await kubectl(["get", "pod", name, "-o", "json"]));
    const status = p.status.containerStatuses[0];
    return {
      id: status.containerID as string,
      restarts: status.restartCount as number,
      phase: p.status.phase,
    };
  };
  // The start time of the container's first process, in clock ticks since boot: a restarted or
  // re-created container would have a later one.
  const processStart = async (name: string) =>
    (await kubectl(["exec", name, "--", "cat", "/proc/1/stat"])).split(" ")[21];

  for (const component of ["kubelet", "containerd"] as const) {
    it(`keeps running pods intact across a ${component} restart`, async () => {
      const name = `survivor-${component}`;
      await kubectl(["apply", "-f", "-"], JSON.stringify(pod(name)));
      await kubectl(["wait", "--for=condition=Ready", `pod/${name}`, "--timeout=180s"]);
      const before = await containerState(name);
      const startedAt = await processStart(name);
      const oldPid = node.pids()[component];

      await node.restart(component);
      assert.notEqual(node.pids()[component], oldPid, `${component} is a new process`);

      // exec goes through kubelet, containerd and the pod's shim, so its success proves all three back.
      const marker = await waitForExec(kubectl, name, ["cat", "/tmp/marker"]);
      assert.equal(marker, "started\n");
      assert.equal(await processStart(name), startedAt, "the same process still runs");
      assert.deepEqual(await containerState(name), before);
      // And the node still starts new pods.
      await kubectl(["apply", "-f", "-"], JSON.stringify(pod(`${name}-after`)));
      await kubectl(["wait", "--for=condition=Ready", `pod/${name}-after`, "--timeout=180s"]);
    });
  }

  it("tears down without leaving a process, mount, namespace, cgroup folder, rule or sysctl behind", async () => {
    const index = node.addresses.index;
    const record = { index, ownerPid: process.pid, dir: node.dir, netns: "", mntns: "" };
    const anchor = node.pids()["namespaces"]!;
    record.netns = readlink(`/proc/${anchor}/ns/net`);
    record.mntns = readlink(`/proc/${anchor}/ns/mnt`);
    const during = nodePids(record);
    // A pid freed by the teardown can be taken at once by any new process (a node another test file
    // starts beside this one may even get this node's index back): the start time tells them apart.
    const startedAt = new Map(during.map((pid) => [pid, processStartTicks(pid)]));
    assert.ok(during.length > 10, `node processes found while running: ${during.length}`);
    assert.ok(cgroupFolders(node.addresses.cgroupRoot).length > 0, "pods live under the node's cgroup root");

    const problems = await node.stop();
    node = undefined as unknown as LocalNode;
    assert.deepEqual(problems, []);
    const after_ = snapshotHost(index);
    const foreign = otherNode(index);
    before_.links = before_.links.filter((l) => !foreign(l));
    before_.routes = before_.routes.filter((l) => !foreign(l));

    // A namespace's inode is reused once it is freed: a node starting beside this one (another test
    // file) may get this node's old netns or mntns number. Its processes are not this node's.
    const others = liveNodes(index);
    const ofAnother = (pid: number) => {
      try {
        const net = readlinkSync(`/proc/${pid}/ns/net`);
        const mnt = readlinkSync(`/proc/${pid}/ns/mnt`);
        const cgroup = /platform-operator-ponode(\d+)(\/|$)/m.exec(
          readFileSync(`/proc/${pid}/cgroup`, "utf8"),
        );
        if (cgroup && Number(cgroup[1]) !== index) return true;
        return others.some(
          (o) => (o.netns !== undefined && o.netns === net) || (o.mntns !== undefined && o.mntns === mnt),
        );
      } catch {
        return true; // exited meanwhile
      }
    };
    assert.deepEqual(
      nodePids(record).filter((pid) => !ofAnother(pid)),
      [],
      "no process in the node's namespaces or cgroups",
    );
    // A process of this node may still be on its way out when stop() returns (its parent reaps it a
    // moment later): wait for that, and name the ones that stay.
    const lingering = () => during.filter((pid) => stillThisNodes(pid, startedAt.get(pid), index));
    await waitUntil(async () => lingering().length === 0, {
      what: "the node's processes to be gone",
      timeoutMs: 30_000,
      intervalMs: 200,
    }).catch(() => assert.deepEqual(lingering(), [], "every process of the node is gone"));
    assert.deepEqual(cgroupFolders(`/platform-operator-ponode${index}`), [], "no cgroup folder");
    assert.deepEqual(after_.mounts, before_.mounts, "the host's mounts are unchanged");
    assert.deepEqual(after_.links, before_.links, "no veth (hence no network namespace) is left");
    assert.deepEqual(after_.routes, before_.routes, "no route is left");
    assert.equal(after_.iptables, before_.iptables, "iptables rules are unchanged");
    assert.equal(after_.nft, before_.nft, "nftables rules are unchanged");
    assert.ok(!existsSync(join(REGISTRY_DIR, `node-${index}.json`)), "the node's record is released");
    if (liveNodes().length === 0) {
      assert.deepEqual(after_.sysctls, before_.sysctls, "kubelet's sysctls are restored");
      assert.equal(after_.savedSysctls, undefined);
    } else {
      // Another node (the shared one) still runs with kubelet's values; the originals stay recorded
      // for whichever node stops last.
      assert.deepEqual(after_.savedSysctls, before_.savedSysctls ?? after_.savedSysctls);
      assert.ok(after_.savedSysctls, "the machine's original values are still on record");
    }
  });

  it("restores recorded sysctls exactly (the guard the last node uses)", () => {
    const dir = mkdtempSync(join(tmpdir(), "sysctl-guard-"));
    try {
      const original = readSysctl("kernel/panic");
      recordSysctls(dir);
      writeFileSync("/proc/sys/kernel/panic", String(Number(original) + 7));
      assert.notEqual(readSysctl("kernel/panic"), original);
      restoreSysctls(dir);
      assert.equal(readSysctl("kernel/panic"), original);
      assert.equal(savedSysctls(dir), undefined, "the record is consumed");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function readlink(path: string): string {
  return execFileSync("readlink", [path], { encoding: "utf8" }).trim();
}

/** Field `n` (1-based, as in proc(5)) of /proc/<pid>/stat; undefined once the process is gone. */
function statField(pid: number, n: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[n - 3];
  } catch {
    return undefined;
  }
}

/** When the process started, in clock ticks since boot; undefined once gone. */
function processStartTicks(pid: number): string | undefined {
  return statField(pid, 22);
}

/**
 * Whether `pid` is still the process of this node seen before the teardown. A pid can be reused by
 * an unrelated process (the start time differs), even one of another node running beside this one
 * (its cgroup names another index); a zombie has exited and only waits for its parent to reap it.
 */
function stillThisNodes(pid: number, startedAt: string | undefined, index: number): boolean {
  if (processStartTicks(pid) !== startedAt) return false;
  const state = statField(pid, 3);
  if (state === undefined || state === "Z" || state === "X") return false;
  try {
    const cgroup = /platform-operator-ponode(\d+)(\/|$)/m.exec(readFileSync(`/proc/${pid}/cgroup`, "utf8"));
    return cgroup?.[1] === String(index);
  } catch {
    return false;
  }
}

async function waitForExec(
  kubectl: (args: string[]) => Promise<string>,
  pod: string,
  command: string[],
): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return await kubectl(["exec", pod, "--", ...command]);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
