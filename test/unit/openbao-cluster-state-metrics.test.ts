import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { registry } from "../../src/runtime/metrics.js";
import {
  forgetClusterMetrics,
  recordClusterState,
  recordRaftPeers,
} from "../../src/targets/openbao/metrics.js";

// The gauges the OpenBao dashboard reads from a pass's status: seal state, leader moves, lock holder.

async function series(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const v = metric?.values.find((s) => Object.entries(labels).every(([k, want]) => s.labels[k] === want));
  return v?.value;
}

describe("openbao cluster state metrics", () => {
  const labels = { namespace: "ns-m", name: "c1" };

  it("counts a leader change only between two known leaders", async () => {
    recordClusterState(labels, undefined, { activeLeader: "c1-0" }, false);
    assert.equal(await series("openbao_cluster_leader_changes_total", labels), 0);
    recordClusterState(labels, { activeLeader: "c1-0" }, { activeLeader: "c1-0" }, false);
    assert.equal(await series("openbao_cluster_leader_changes_total", labels), 0);
    recordClusterState(labels, { activeLeader: "c1-0" }, { activeLeader: "c1-2" }, false);
    assert.equal(await series("openbao_cluster_leader_changes_total", labels), 1);
    recordClusterState(labels, { activeLeader: "c1-2" }, {}, false);
    assert.equal(await series("openbao_cluster_leader_changes_total", labels), 1);
  });

  it("says sealed, unsealed, or nothing while unknown", async () => {
    recordClusterState(labels, undefined, {}, true);
    assert.equal(await series("openbao_cluster_sealed", labels), 1);
    recordClusterState(labels, undefined, {}, false);
    assert.equal(await series("openbao_cluster_sealed", labels), 0);
    recordClusterState(labels, undefined, {}, undefined);
    assert.equal(await series("openbao_cluster_sealed", labels), undefined);
  });

  it("marks the operation holding the lock, and none once it is free", async () => {
    recordClusterState(labels, undefined, { operationLock: { operation: "Backup" } }, false);
    assert.equal(await series("openbao_operation_lock_held", { ...labels, operation: "Backup" }), 1);
    assert.equal(await series("openbao_operation_lock_held", { ...labels, operation: "Upgrade" }), 0);
    recordClusterState(labels, undefined, {}, false);
    assert.equal(await series("openbao_operation_lock_held", { ...labels, operation: "Backup" }), 0);
  });

  it("sets the Raft peers per state, and removes them when a pass could not count", async () => {
    recordRaftPeers(labels, { active: 1, standby: 1, sealed: 1 });
    assert.equal(await series("openbao_cluster_raft_peers", { ...labels, state: "active" }), 1);
    assert.equal(await series("openbao_cluster_raft_peers", { ...labels, state: "sealed" }), 1);
    recordRaftPeers(labels, undefined);
    assert.equal(await series("openbao_cluster_raft_peers", { ...labels, state: "standby" }), undefined);
  });

  it("forgets every series of a deleted cluster", async () => {
    recordRaftPeers(labels, { active: 1, standby: 2, sealed: 0 });
    recordClusterState(
      labels,
      { activeLeader: "a" },
      { activeLeader: "b", operationLock: { operation: "Restore" } },
      true,
    );
    forgetClusterMetrics(labels.namespace, labels.name);
    for (const name of [
      "openbao_cluster_sealed",
      "openbao_cluster_leader_changes_total",
      "openbao_operation_lock_held",
      "openbao_cluster_raft_peers",
    ])
      assert.equal(await series(name, labels), undefined, name);
  });
});
