import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { LABEL_REVISION } from "../../src/targets/openbao/identity.js";
import {
  buildGreenStatefulSet,
  buildServingStatefulSet,
  claimsOfSet,
  greenPeerHosts,
  greenRevision,
  retiredVoterSets,
} from "../../src/targets/openbao/workload/statefulsets/bluegreen.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const OLD = "openbao/openbao:2.6.2";
const NEW = "openbao/openbao:2.7.2";
type BG = NonNullable<OpenBaoCluster["status"]>["blueGreen"];
const cluster = (bg?: BG): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", replicas: 3, storage: { size: "1Gi" }, upgrade: { strategy: "BlueGreen" } },
    status: { currentVersion: "2.6.2", ...(bg ? { blueGreen: bg } : {}) },
  }) as OpenBaoCluster;
const upgrading = (phase: NonNullable<BG>["phase"], blueRevision?: string): OpenBaoCluster =>
  cluster({
    phase,
    blueRevision,
    greenRevision: "r2",
    greenImage: NEW,
    blueImage: OLD,
    greenReplicas: 3,
    blueReplicas: 3,
  });
const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const voter = (c: OpenBaoCluster, partition?: number): Json =>
  buildStatefulSet(c, {
    component: "server",
    replicas: 3,
    configHash: "h",
    clusterDomain: "cluster.local",
    runtime,
    ...(partition !== undefined ? { partition } : {}),
  });
const image = (s: Json): string => s["spec"].template.spec.containers[0].image;
const configMapOf = (s: Json): string[] =>
  s["spec"].template.spec.volumes
    .find((v: Json) => v["name"] === "config")
    .projected.sources.map((x: Json) => x["configMap"]?.name);

describe("blue-green workload: the serving set, green's set, and what is retired", () => {
  it("without any upgrade the serving set is the cluster's own, unchanged", () => {
    const c = cluster();
    assert.deepEqual(buildServingStatefulSet(c, voter(c), 3), voter(c));
  });

  it("during an upgrade blue keeps its name, is pinned to blueImage, and has no pods in Cleanup", () => {
    const c = upgrading("Syncing");
    const s = buildServingStatefulSet(c, voter(c), 3) as Json;
    assert.equal(s["metadata"].name, "demo");
    assert.equal(image(s), OLD);
    assert.equal(s["spec"].replicas, 3);
    assert.equal((buildServingStatefulSet(upgrading("Cleanup"), voter(c), 3) as Json)["spec"].replicas, 0);
  });

  it("after a completed upgrade the serving set is green's set under its immutable selector, keeping the partition", () => {
    const c = cluster({ phase: "Idle", blueRevision: "r2", blueImage: NEW });
    const green = buildGreenStatefulSet(
      upgrading("Cleanup"),
      voter(c),
      greenRevision(upgrading("Cleanup"))!,
    ) as Json;
    const s = buildServingStatefulSet(c, voter(c, 3), 3) as Json;
    assert.equal(s["metadata"].name, "demo-r2");
    // A StatefulSet's selector cannot change: the serving set must keep the one green was created with.
    assert.deepEqual(s["spec"].selector, green["spec"].selector);
    assert.equal(s["spec"].template.metadata.labels[LABEL_REVISION], "r2");
    assert.ok(configMapOf(s).includes("demo-config-r2"));
    assert.ok(!configMapOf(s).includes("demo-config"));
    // The rolling partition still holds a pending version change on the serving revision.
    assert.equal(s["spec"].updateStrategy.rollingUpdate.partition, 3);
    assert.equal(image(s), image(voter(c)));
  });

  it("green's retry_join goes to blue's pods first, then green's own", () => {
    const c = upgrading("DeployingGreen", "r1");
    assert.deepEqual(greenPeerHosts(c, greenRevision(c)!, "cluster.local"), [
      "demo-r1-0.demo.ns.svc",
      "demo-r1-1.demo.ns.svc",
      "demo-r1-2.demo.ns.svc",
      "demo-r2-0.demo.ns.svc",
      "demo-r2-1.demo.ns.svc",
      "demo-r2-2.demo.ns.svc",
    ]);
  });

  it("retires blue once the upgrade completed and green once a rollback cleans up, never the serving set", () => {
    const live = ["demo", "demo-r2"];
    for (const p of ["DeployingGreen", "Syncing", "DemotingBlue", "Cleanup", "RollingBack"] as const)
      assert.deepEqual(retiredVoterSets(upgrading(p), live), [], p);
    assert.deepEqual(retiredVoterSets(upgrading("RollbackCleanup"), live), ["demo-r2"]);
    assert.deepEqual(
      retiredVoterSets(cluster({ phase: "Idle", blueImage: OLD, rollbackReason: "x" }), live),
      ["demo-r2"],
    );
    assert.deepEqual(retiredVoterSets(cluster({ phase: "Idle", blueRevision: "r2" }), live), ["demo"]);
    // A second upgrade from r2: r2 serves, r3 is green, the first set is already gone.
    const second = cluster({ phase: "Syncing", blueRevision: "r2", greenRevision: "r3", greenImage: NEW });
    assert.deepEqual(retiredVoterSets(second, ["demo-r2", "demo-r3"]), []);
  });

  it("a set's claims are data-<set>-N and nothing of another set", () => {
    const claims = [
      "data-demo-0",
      "data-demo-2",
      "data-demo-r2-0",
      "data-demo-r2-1",
      "data-demo-read-0",
      "data-demo-x",
    ];
    assert.deepEqual(claimsOfSet("demo", claims), ["data-demo-0", "data-demo-2"]);
    assert.deepEqual(claimsOfSet("demo-r2", claims), ["data-demo-r2-0", "data-demo-r2-1"]);
  });
});
