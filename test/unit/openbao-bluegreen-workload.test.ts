import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlueGreenPhase, OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import {
  LABEL_REVISION,
  podSelector,
  revisionFor,
  revisionNames,
} from "../../src/targets/openbao/identity.js";
import { renderConfig } from "../../src/targets/openbao/workload/config/index.js";
import {
  bluePinnedImage,
  blueReplicas,
  buildGreenStatefulSet,
  clientSelector,
  greenRevision,
} from "../../src/targets/openbao/workload/statefulsets/bluegreen.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const OLD = "openbao/openbao:2.6.2";
const NEW = "openbao/openbao:2.7.2";
const cluster = (phase?: BlueGreenPhase): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", replicas: 3, storage: { size: "1Gi" }, upgrade: { strategy: "BlueGreen" } },
    status: phase
      ? {
          currentVersion: "2.6.2",
          blueGreen: { phase, greenRevision: "2-7-2-op1", greenImage: NEW, blueImage: OLD, greenReplicas: 3 },
        }
      : { currentVersion: "2.6.2" },
  }) as OpenBaoCluster;
const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const voter = (c: OpenBaoCluster): Json =>
  buildStatefulSet(c, {
    component: "server",
    replicas: 3,
    configHash: "h",
    clusterDomain: "cluster.local",
    runtime,
  });

describe("blue-green workload: which revision runs where", () => {
  it("green exists from DeployingGreen through RollingBack, not when Idle or in RollbackCleanup", () => {
    for (const p of [
      "DeployingGreen",
      "JoiningMesh",
      "Syncing",
      "Promoting",
      "DemotingBlue",
      "Cleanup",
      "RollingBack",
    ] as const)
      assert.equal(greenRevision(cluster(p))?.revision, "2-7-2-op1", p);
    for (const p of [undefined, "Idle", "RollbackCleanup"] as const)
      assert.equal(greenRevision(cluster(p)), undefined, p);
  });

  it("blue is pinned to blueImage while an upgrade runs, and scaled away in Cleanup", () => {
    assert.equal(bluePinnedImage(cluster("Syncing")), OLD);
    assert.equal(bluePinnedImage(cluster("Idle")), undefined);
    assert.equal(bluePinnedImage(cluster()), undefined);
    assert.equal(blueReplicas(cluster("DemotingBlue"), 3), 3);
    assert.equal(blueReplicas(cluster("Cleanup"), 3), 0);
  });

  it("the client Service selects every voter until green votes, then green alone", () => {
    const all = podSelector({ name: "demo", namespace: "ns" });
    for (const p of [
      "DeployingGreen",
      "JoiningMesh",
      "Syncing",
      "Promoting",
      "RollingBack",
      "RollbackCleanup",
    ] as const)
      assert.deepEqual(clientSelector(cluster(p)), all, p);
    for (const p of ["DemotingBlue", "Cleanup"] as const)
      assert.deepEqual(clientSelector(cluster(p)), { ...all, [LABEL_REVISION]: "2-7-2-op1" }, p);
  });
});

describe("blue-green workload: the green StatefulSet", () => {
  const c = cluster("DeployingGreen");
  const blue = voter(c);
  const green: Json = buildGreenStatefulSet(c, blue, greenRevision(c)!);

  it("has its own name, revision-labelled pods and selector, and the green image", () => {
    assert.equal(green.metadata.name, "demo-2-7-2-op1");
    assert.equal(green.metadata.labels[LABEL_REVISION], "2-7-2-op1");
    assert.equal(green.spec.selector.matchLabels[LABEL_REVISION], "2-7-2-op1");
    assert.equal(green.spec.template.metadata.labels[LABEL_REVISION], "2-7-2-op1");
    assert.equal(green.spec.template.spec.containers[0].image, NEW);
    assert.equal(
      green.spec.serviceName,
      blue.spec.serviceName,
      "same headless Service: one DNS domain for Raft",
    );
    assert.deepEqual(green.spec.updateStrategy, { type: "RollingUpdate" });
  });

  it("mounts green's config map instead of the voters'", () => {
    const sources = green.spec.template.spec.volumes.find((v: Json) => v.name === "config").projected.sources;
    const names = sources.map((s: Json) => s.configMap?.name);
    assert.ok(names.includes("demo-config-2-7-2-op1"), names.join(","));
    assert.ok(!names.includes("demo-config"));
    assert.equal(
      blue.spec.template.spec.volumes.find((v: Json) => v.name === "config").projected.sources[0].configMap
        .name,
      "demo-config",
      "blue untouched",
    );
  });

  it("mounts green's config Secret when config.hcl must be a Secret (a plugin's environment)", () => {
    const withEnv = cluster("DeployingGreen");
    (withEnv.spec as Json)["plugins"] = [
      {
        type: "secret",
        name: "example",
        image: "ghcr.io/example/plugin",
        version: "1.0.0",
        binaryName: "plugin",
        sha256sum: "c".repeat(64),
        env: ["API_TOKEN=x"],
      },
    ];
    const blueSet = voter(withEnv);
    const greenSet: Json = buildGreenStatefulSet(withEnv, blueSet, greenRevision(withEnv)!);
    const sourcesOf = (s: Json): Json[] =>
      s.spec.template.spec.volumes.find((v: Json) => v.name === "config").projected.sources;
    assert.equal(sourcesOf(blueSet)[0].secret.name, "demo-config");
    const greenNames = sourcesOf(greenSet).map((s: Json) => s.secret?.name ?? s.configMap?.name);
    assert.ok(greenNames.includes("demo-config-2-7-2-op1"), greenNames.join(","));
    assert.ok(!greenNames.includes("demo-config"), "green must not run the voters' config");
  });

  it("green's config joins as a non-voter; the voters' does not", () => {
    const text = renderConfig(c, { clusterDomain: "cluster.local", revision: "2-7-2-op1", nonVoter: true });
    assert.match(text, /retry_join_as_non_voter\s*=\s*true/);
    assert.match(text, /# revision 2-7-2-op1/);
    assert.doesNotMatch(renderConfig(c, { clusterDomain: "cluster.local" }), /retry_join_as_non_voter/);
  });
});

describe("blue-green workload: revision names", () => {
  it("makes short DNS-safe names and refuses bad ones by name", () => {
    const r = revisionFor("2.7.2", "Op-1a2b3c");
    assert.match(r, /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
    assert.ok(r.length <= 20);
    assert.equal(revisionNames({ name: "demo", namespace: "ns" }, r).statefulSet, `demo-${r}`);
    assert.throws(() => revisionNames({ name: "demo", namespace: "ns" }, "Bad_Rev"), /revision "Bad_Rev"/);
  });
});
