import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import { setUpgrading, UpgradeReason } from "../../src/targets/openbao/adminops/upgrade/core/condition.js";
import { type UpgradeStatus, writeUpgrade } from "../../src/targets/openbao/adminops/upgrade/core/status.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import {
  AdminOpsPass,
  adminOpsPlaneOf,
  writeAdminOpsConcern,
} from "../../src/targets/openbao/opslifecycle/index.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// A rolling pass that lowers the partition makes three AdminOps plane changes: status.upgrade, the
// Upgrading condition, and (after earlier failures) clearing consecutiveFailures. Written at once,
// each is a fresh GET plus a conditional apply; staged in the pass, they are one GET and one apply.
// Both ways are run here against the real API server, counting the requests on the cluster.

interface Counts {
  gets: number;
  statusApplies: number;
}

/** The client with its OpenBaoCluster GETs and status applies counted. */
function counting(client: KubeClient): { client: KubeClient; counts: Counts } {
  const counts: Counts = { gets: 0, statusApplies: 0 };
  const wrapped = new Proxy(client, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const kind = (args[0] as { kind?: string } | undefined)?.kind;
        if (kind === OPENBAOCLUSTER.kind && prop === "get") counts.gets++;
        if (kind === OPENBAOCLUSTER.kind && prop === "applyStatus") counts.statusApplies++;
        return v.apply(target, args);
      };
    },
  });
  return { client: wrapped, counts };
}

describe("openbao AdminOps: one status write per pass", () => {
  let client: KubeClient;
  let ns: string;
  const events = () => new EventRecorder(client, "platform-operator/openbao", "test", silentLogger());
  const now = new Date("2026-12-06T12:00:00Z");
  const inFlight: UpgradeStatus = {
    targetVersion: "2.7.2",
    fromVersion: "2.6.2",
    startedAt: "2026-12-06T11:00:00Z",
    currentPartition: 2,
    completedPods: [],
    consecutiveFailures: 2,
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obpass");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  /** What lowerPartition, its condition and clearFailures do, through `to`. */
  async function lowerPartitionPass(to: KubeClient | AdminOpsPass, name: string): Promise<boolean> {
    const ref = { name, namespace: ns };
    const cluster = await client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);
    const w = await writeUpgrade(to, ref, (cur) =>
      cur && cur.currentPartition === 2 ? { upgrade: { ...cur, currentPartition: 1 } } : undefined,
    );
    await setUpgrading(
      to,
      events(),
      cluster,
      { status: "True", reason: UpgradeReason.InProgress, message: "upgrading: replacing pod 1" },
      now,
    );
    await writeUpgrade(to, ref, (cur) => {
      if (!cur?.consecutiveFailures) return undefined;
      const { consecutiveFailures: _cleared, ...rest } = cur;
      return { upgrade: rest };
    });
    return w.wrote;
  }

  async function seeded(name: string): Promise<void> {
    await createOpenBaoCluster(client, ns, name, { version: "2.7.2", replicas: 3 });
    await writeAdminOpsConcern(client, { name, namespace: ns }, "upgrade", () => inFlight);
  }

  const planeOf = async (name: string) => {
    const plane = adminOpsPlaneOf((await client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns)).status);
    for (const c of plane.conditions ?? []) c.lastTransitionTime = "-";
    return plane;
  };

  it("three changes: 3 GETs + 3 applies written at once, 1 GET + 1 apply staged; the same status", async () => {
    await seeded("at-once");
    await seeded("staged");

    const before = counting(client);
    assert.equal(await lowerPartitionPass(before.client, "at-once"), true);

    const after = counting(client);
    const pass = new AdminOpsPass(after.client, { name: "staged", namespace: ns });
    assert.equal(await lowerPartitionPass(pass, "staged"), true, "the change is known when staged");
    assert.deepEqual(after.counts, { gets: 1, statusApplies: 0 }, "nothing is written before the commit");
    assert.deepEqual(await pass.commit(), { wrote: true });

    assert.deepEqual(before.counts, { gets: 3, statusApplies: 3 });
    assert.deepEqual(after.counts, { gets: 1, statusApplies: 1 });
    const a = await planeOf("at-once");
    assert.equal(a.upgrade?.currentPartition, 1);
    assert.equal(a.upgrade?.consecutiveFailures, undefined);
    assert.equal(a.conditions?.find((c) => c.type === "Upgrading")?.reason, UpgradeReason.InProgress);
    assert.deepEqual(await planeOf("staged"), a, "the one write leaves what the three did");

    // A pass that changes nothing writes nothing, staged or not.
    const quiet = counting(client);
    const again = new AdminOpsPass(quiet.client, { name: "staged", namespace: ns });
    assert.equal(await lowerPartitionPass(again, "staged"), false);
    assert.deepEqual(await again.commit(), { wrote: false });
    assert.equal(quiet.counts.statusApplies, 0);
  });

  it("another writer between the read and the commit: the staged changes are replayed on its write", async () => {
    await seeded("raced");
    const ref = { name: "raced", namespace: ns };
    const pass = new AdminOpsPass(client, ref);
    await lowerPartitionPass(pass, "raced");
    // The backup concern changes under the same plane meanwhile (a conditional write of its own).
    await writeAdminOpsConcern(client, ref, "backup", () => ({ lastBackupName: "b-1" }));
    assert.deepEqual(await pass.commit(), { wrote: true });
    const plane = await planeOf("raced");
    assert.equal(plane.backup?.lastBackupName, "b-1", "the other writer's change is kept");
    assert.equal(plane.upgrade?.currentPartition, 1, "and the pass's changes land");
    assert.equal(plane.upgrade?.consecutiveFailures, undefined);
  });
});
