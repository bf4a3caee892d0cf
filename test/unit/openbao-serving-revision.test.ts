import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlueGreenPhase, OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { servingRef, servingRevision, voterRefs } from "../../src/targets/openbao/cluster-ref.js";
import {
  podHost,
  podName,
  voterConfigMapName,
  voterOrdinal,
  voterSetName,
} from "../../src/targets/openbao/identity.js";
import { serverNames, tlsSettings } from "../../src/targets/openbao/workload/certs/plan.js";
import { peerHosts } from "../../src/targets/openbao/workload/config/render.js";
import { clusterPodNames } from "../../src/targets/openbao/workload/identity/plan.js";

const cluster = (bg?: {
  phase?: BlueGreenPhase;
  blueRevision?: string;
  greenRevision?: string;
}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", replicas: 3, storage: { size: "1Gi" } },
    status: bg ? { blueGreen: bg } : {},
  }) as OpenBaoCluster;

describe("serving revision: which voter set serves, from status alone", () => {
  it("is the cluster's own set before any blue-green upgrade", () => {
    const c = cluster();
    assert.equal(servingRevision(c), undefined);
    assert.deepEqual(servingRef(c), { name: "demo", namespace: "ns" });
    assert.equal(voterSetName(servingRef(c)), "demo");
    assert.equal(voterConfigMapName(servingRef(c)), "demo-config");
    assert.equal(podName(servingRef(c), 2), "demo-2");
  });

  it("stays blue's revision throughout an upgrade and moves to green's only when it completed", () => {
    const during = cluster({ phase: "Cleanup", greenRevision: "2-7-2-abc" });
    assert.equal(voterSetName(servingRef(during)), "demo");
    const done = cluster({ phase: "Idle", blueRevision: "2-7-2-abc" });
    assert.equal(servingRevision(done), "2-7-2-abc");
    assert.equal(voterSetName(servingRef(done)), "demo-2-7-2-abc");
    assert.equal(voterConfigMapName(servingRef(done)), "demo-config-2-7-2-abc");
    assert.equal(podName(servingRef(done), 0), "demo-2-7-2-abc-0");
    assert.equal(podHost(servingRef(done), 1), "demo-2-7-2-abc-1.demo.ns.svc.cluster.local");
  });

  it("reads a Raft node id back to an ordinal only for the serving set's pods", () => {
    const ref = servingRef(cluster({ phase: "Idle", blueRevision: "r1" }));
    assert.equal(voterOrdinal(ref, "demo-r1-2"), 2);
    assert.equal(voterOrdinal(ref, "demo-2"), undefined);
    assert.equal(voterOrdinal(ref, "demo-r1-x"), undefined);
    assert.equal(voterOrdinal(ref, "demo-r1-02"), undefined);
    assert.equal(voterOrdinal({ name: "demo", namespace: "ns" }, "demo-0"), 0);
    assert.equal(voterOrdinal({ name: "demo", namespace: "ns" }, "demo-r1-0"), undefined);
  });

  it("lists green's set next to the serving one only while an upgrade runs", () => {
    assert.deepEqual(
      voterRefs(cluster({ phase: "Syncing", blueRevision: "r1", greenRevision: "r2" })).map(voterSetName),
      ["demo-r1", "demo-r2"],
    );
    assert.deepEqual(
      voterRefs(cluster({ phase: "Idle", blueRevision: "r2", greenRevision: "r2" })).map(voterSetName),
      ["demo-r2"],
    );
  });

  it("config peers are the serving revision's pods", () => {
    assert.deepEqual(peerHosts(cluster({ phase: "Idle", blueRevision: "r1" }), {}), [
      "demo-r1-0.demo.ns.svc",
      "demo-r1-1.demo.ns.svc",
      "demo-r1-2.demo.ns.svc",
    ]);
  });

  it("the service-registration Role names every live revision's pods", () => {
    const names = clusterPodNames(cluster({ phase: "Promoting", greenRevision: "r2" }));
    assert.deepEqual(names, ["demo-0", "demo-1", "demo-2", "demo-r2-0", "demo-r2-1", "demo-r2-2"]);
  });

  it("the server certificate covers every revision's pods by the headless wildcard, and does not change with the phase", () => {
    const before = cluster();
    const during = cluster({ phase: "DemotingBlue", greenRevision: "r2" });
    const after = cluster({ phase: "Idle", blueRevision: "r2" });
    const sans = serverNames(before, tlsSettings(before));
    // A new name would re-issue the certificate and roll every pod mid-upgrade (the cert hash is in
    // the pod template): the list must not depend on status.
    assert.deepEqual(serverNames(during, tlsSettings(during)), sans);
    assert.deepEqual(serverNames(after, tlsSettings(after)), sans);
    assert.ok(sans.includes("*.demo.ns.svc.cluster.local"));
    for (const host of [
      podHost(servingRef(after), 0),
      podHost({ name: "demo", namespace: "ns", revision: "r2" }, 2),
    ])
      assert.ok(
        sans.some(
          (s) =>
            s.startsWith("*.") && host.endsWith(s.slice(1)) && !host.slice(0, -s.length + 1).includes("."),
        ),
        `${host} covered`,
      );
  });
});
