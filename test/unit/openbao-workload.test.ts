import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { parseQuantity as quantityBytes } from "../../src/runtime/quantity.js";
import { ConfigError } from "../../src/runtime/target.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { ANNOTATION_CONFIG_HASH, ANNOTATION_TLS_CERT_HASH } from "../../src/targets/openbao/identity.js";
import { leaderPod } from "../../src/targets/openbao/reconciler.js";
import {
  autopilotDiff,
  desiredAutopilot,
  durationSeconds,
} from "../../src/targets/openbao/workload/autopilot/autopilot.js";
import { initRequest } from "../../src/targets/openbao/workload/init/init.js";
import { buildStatefulSet, imageOf } from "../../src/targets/openbao/workload/statefulsets/build.js";
import { voterIntent } from "../../src/targets/openbao/workload/statefulsets/scale.js";

// biome-ignore lint/suspicious/noExplicitAny: API objects and trees are read loosely in tests
type Json = Record<string, any>;

const cluster = (spec: Partial<OpenBaoCluster["spec"]> = {}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  }) as OpenBaoCluster;

const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const pod = (i: number) => `demo-${i}`;

describe("openbao voter intent", () => {
  it("caps the voters at one until initialized, whatever spec.replicas says", () => {
    assert.deepEqual(voterIntent({ initialized: false, specReplicas: 5, podName: pod }), {
      replicas: 1,
      removePeers: [],
    });
    assert.deepEqual(voterIntent({ initialized: false, specReplicas: 3, liveReplicas: 1, podName: pod }), {
      replicas: 1,
      removePeers: [],
    });
  });

  it("grows to spec.replicas at once after initialization", () => {
    assert.deepEqual(voterIntent({ initialized: true, specReplicas: 3, liveReplicas: 1, podName: pod }), {
      replicas: 3,
      removePeers: [],
    });
  });

  it("shrinks only after the departing pods left Raft, removing those still listed first", () => {
    const still = voterIntent({
      initialized: true,
      specReplicas: 3,
      liveReplicas: 5,
      raftPeers: ["demo-0", "demo-1", "demo-2", "demo-3", "demo-4"],
      podName: pod,
    });
    assert.deepEqual(still, { replicas: 5, removePeers: ["demo-3", "demo-4"] });
    const gone = voterIntent({
      initialized: true,
      specReplicas: 3,
      liveReplicas: 5,
      raftPeers: ["demo-0", "demo-1", "demo-2"],
      podName: pod,
    });
    assert.deepEqual(gone, { replicas: 3, removePeers: [] });
  });

  it("shrinks only once Autopilot's state no longer lists a removed peer either", () => {
    // Raft dropped demo-1 and demo-2, Autopilot's older state still has demo-2: from it Autopilot
    // could vote demo-2 back in, and with its pod gone one voter of two is no quorum.
    const remembered = voterIntent({
      initialized: true,
      specReplicas: 1,
      liveReplicas: 3,
      raftPeers: ["demo-0"],
      autopilotServers: ["demo-0", "demo-2"],
      podName: pod,
    });
    assert.equal(remembered.replicas, 3);
    assert.deepEqual(remembered.removePeers, []);
    assert.match(remembered.waiting ?? "", /Autopilot's state no longer lists the removed peers demo-2/);
    const forgotten = voterIntent({
      initialized: true,
      specReplicas: 1,
      liveReplicas: 3,
      raftPeers: ["demo-0"],
      autopilotServers: ["demo-0"],
      podName: pod,
    });
    assert.deepEqual(forgotten, { replicas: 1, removePeers: [] });
  });

  it("keeps the live count while the peers cannot be read", () => {
    const v = voterIntent({ initialized: true, specReplicas: 1, liveReplicas: 3, podName: pod });
    assert.equal(v.replicas, 3);
    assert.match(v.waiting ?? "", /Raft peers/);
  });
});

describe("openbao StatefulSet", () => {
  it("carries the config hash on the pod template and the certificate hash only on the StatefulSet", () => {
    const sts = buildStatefulSet(cluster(), {
      component: "server",
      replicas: 1,
      configHash: "abc",
      certHash: "cert-1",
      clusterDomain: "cluster.local",
      runtime,
    }) as Json;
    assert.equal(sts.spec.template.metadata.annotations[ANNOTATION_CONFIG_HASH], "abc");
    assert.equal(sts.spec.template.metadata.annotations[ANNOTATION_TLS_CERT_HASH], undefined);
    assert.equal(sts.metadata.annotations[ANNOTATION_TLS_CERT_HASH], "cert-1");
    const other = buildStatefulSet(cluster(), {
      component: "server",
      replicas: 1,
      configHash: "abc",
      certHash: "cert-2",
      clusterDomain: "cluster.local",
      runtime,
    }) as Json;
    assert.deepEqual(
      other.spec.template,
      sts.spec.template,
      "a new certificate leaves the pod template alone",
    );
  });

  it("sizes claims from spec.storage, and keeps a live claim template as it is", () => {
    const fresh = buildStatefulSet(cluster({ storage: { size: "2Gi", storageClassName: "fast" } }), {
      component: "server",
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime,
    }) as Json;
    assert.deepEqual(fresh.spec.volumeClaimTemplates[0].spec.resources.requests, { storage: "2Gi" });
    assert.equal(fresh.spec.volumeClaimTemplates[0].spec.storageClassName, "fast");
    const kept = buildStatefulSet(cluster({ storage: { size: "4Gi" } }), {
      component: "server",
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime,
      claim: { size: "2Gi", storageClassName: "fast" },
    }) as Json;
    assert.deepEqual(kept.spec.volumeClaimTemplates[0].spec.resources.requests, { storage: "2Gi" });
  });

  it("gives each pod its node id and addresses from its own name", () => {
    const sts = buildStatefulSet(cluster(), {
      component: "server",
      replicas: 1,
      configHash: "h",
      clusterDomain: "example.internal",
      runtime,
    }) as Json;
    const env = Object.fromEntries(
      sts.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]),
    );
    assert.equal(env.BAO_RAFT_NODE_ID, "$(BAO_K8S_POD_NAME)");
    assert.equal(env.BAO_API_ADDR, "https://$(BAO_K8S_POD_NAME).demo.ns.svc:8200");
    assert.equal(env.BAO_CLUSTER_ADDR, "https://$(BAO_K8S_POD_NAME).demo.ns.svc:8201");
    // The CLI inside the pod: loopback, which the operator's certificate carries and needs no DNS.
    assert.equal(env.BAO_ADDR, "https://127.0.0.1:8200");
    // With an External certificate the pod's own name, which every accepted one carries.
    const external = buildStatefulSet(cluster({ tls: { mode: "External" } }), {
      component: "server",
      replicas: 1,
      configHash: "h",
      clusterDomain: "example.internal",
      runtime,
    }) as Json;
    assert.equal(
      external.spec.template.spec.containers[0].env.find((e: Json) => e.name === "BAO_ADDR").value,
      "https://$(BAO_K8S_POD_NAME).demo.ns.svc:8200",
    );
    // Nothing a seal's client would read as its own server name.
    assert.equal(env.BAO_TLS_SERVER_NAME, undefined);
    assert.equal(sts.spec.serviceName, "demo");
    assert.equal(sts.spec.template.spec.serviceAccountName, "demo-serviceaccount");
    assert.equal(imageOf(cluster({ version: "v2.6.2" })), "openbao/openbao:2.6.2");
    assert.equal(imageOf(cluster({ image: "registry.local/bao:1" })), "registry.local/bao:1");
  });
});

describe("openbao StatefulSet of a cluster that kept its old peer Service", () => {
  it("keeps the pods under it with the full names they joined Raft with", () => {
    const kept = cluster();
    kept.metadata.annotations = { "openbao.org/peer-service": "demo-internal" };
    const sts = buildStatefulSet(kept, {
      component: "server",
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime,
    }) as Json;
    const env = Object.fromEntries(
      sts.spec.template.spec.containers[0].env.map((e: Json) => [e.name, e.value ?? e.valueFrom]),
    );
    assert.equal(sts.spec.serviceName, "demo-internal");
    assert.equal(env.BAO_API_ADDR, "https://$(BAO_K8S_POD_NAME).demo-internal.ns.svc.cluster.local:8200");
    assert.equal(env.BAO_ADDR, "https://127.0.0.1:8200");
  });

  it("keeps the live claim template's labels: a StatefulSet's claim template cannot change", () => {
    const old = { "openbao.org/cluster": "demo", "app.kubernetes.io/managed-by": "platform-operator" };
    const sts = buildStatefulSet(cluster(), {
      component: "server",
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime,
      claim: { size: "1Gi", labels: old },
    }) as Json;
    assert.deepEqual(sts.spec.volumeClaimTemplates[0].metadata.labels, old);
    assert.equal(sts.metadata.labels["app.kubernetes.io/managed-by"], "openbao-operator");
  });

  it("refuses a peer-service annotation that is not a DNS label, naming it", () => {
    const bad = cluster();
    bad.metadata.annotations = { "openbao.org/peer-service": "Not A Label" };
    assert.throws(
      () =>
        buildStatefulSet(bad, {
          component: "server",
          replicas: 1,
          configHash: "h",
          clusterDomain: "c",
          runtime,
        }),
      (e: unknown) =>
        /metadata\.annotations\["openbao\.org\/peer-service"\]: must be a DNS label/.test(String(e)),
    );
  });
});

describe("openbao init and Autopilot", () => {
  it("asks the static seal for no keys and auto-unseal seals for one recovery share", () => {
    assert.deepEqual(initRequest(cluster()), {});
    assert.deepEqual(
      initRequest(
        cluster({
          unseal: {
            type: "transit",
            transit: { address: "https://kms.example:8200", mountPath: "transit", keyName: "bao" },
          },
        }),
      ),
      {
        recovery_shares: 1,
        recovery_threshold: 1,
      },
    );
  });

  it("maps the spec's Autopilot to OpenBao's fields over upstream's defaults, the quorum floor by profile", () => {
    const defaults = {
      dead_server_last_contact_threshold: "5m",
      last_contact_threshold: "10s",
      max_trailing_logs: 1000,
      server_stabilization_time: "10s",
    };
    // Three voters (the default): a floor of 3, so dead-server cleanup is on.
    assert.deepEqual(desiredAutopilot(cluster()), { ...defaults, cleanup_dead_servers: true, min_quorum: 3 });
    // One Development (or unset) voter: a floor of 1, where OpenBao would refuse cleanup.
    assert.deepEqual(desiredAutopilot(cluster({ replicas: 1, profile: "Development" })), {
      ...defaults,
      cleanup_dead_servers: false,
      min_quorum: 1,
    });
    // Hardened never goes below 3, and follows the voters above it.
    assert.equal(desiredAutopilot(cluster({ replicas: 1, profile: "Hardened" })).min_quorum, 3);
    assert.equal(desiredAutopilot(cluster({ replicas: 1, profile: "Hardened" })).cleanup_dead_servers, true);
    assert.equal(desiredAutopilot(cluster({ replicas: 5, profile: "Hardened" })).min_quorum, 5);
    assert.equal(desiredAutopilot(cluster({ replicas: 5 })).min_quorum, 5);
    // What the spec says wins, the floor and cleanup too, over one voter.
    const c = cluster({
      replicas: 1,
      configuration: {
        raft: {
          autopilot: {
            cleanupDeadServers: true,
            maxTrailingLogs: 100,
            serverStabilizationTime: "20s",
            minQuorum: 3,
          },
        },
      },
    });
    assert.deepEqual(desiredAutopilot(c), {
      ...defaults,
      cleanup_dead_servers: true,
      max_trailing_logs: 100,
      server_stabilization_time: "20s",
      min_quorum: 3,
    });
    // Under a floor of 3 cleanup stays off even when `true`, as the definition defaults it once any
    // Autopilot setting is given: OpenBao refuses cleanup there, and the other settings with it.
    for (const replicas of [1, 2])
      assert.deepEqual(
        desiredAutopilot(
          cluster({
            replicas,
            configuration: {
              raft: { autopilot: { cleanupDeadServers: true, serverStabilizationTime: "5s" } },
            },
          }),
        ),
        { ...defaults, cleanup_dead_servers: false, server_stabilization_time: "5s", min_quorum: replicas },
      );
  });

  it("compares durations by value, so OpenBao's 5m0s equals the spec's 5m", () => {
    assert.equal(durationSeconds("5m0s"), 300);
    assert.equal(durationSeconds("1h30m"), 5400);
    assert.equal(durationSeconds("soon"), undefined);
    assert.deepEqual(
      autopilotDiff(
        { cleanup_dead_servers: true, dead_server_last_contact_threshold: "5m", min_quorum: 3 },
        {
          cleanup_dead_servers: true,
          dead_server_last_contact_threshold: "5m0s",
          min_quorum: 3,
          max_trailing_logs: 1000,
        },
      ),
      [],
    );
    assert.deepEqual(
      autopilotDiff(
        { min_quorum: 5, server_stabilization_time: "10s" },
        { min_quorum: 3, server_stabilization_time: "10s" },
      ),
      ["min_quorum"],
    );
  });
});

describe("openbao target helpers", () => {
  it("names the leader pod from OpenBao's leader address", () => {
    assert.equal(leaderPod("https://demo-1.demo.ns.svc:8200"), "demo-1");
    assert.equal(leaderPod(""), "");
    assert.equal(leaderPod("not a url"), "");
  });

  it("reads quantities", () => {
    assert.equal(quantityBytes("1Gi"), 2 ** 30);
    assert.equal(quantityBytes("500M"), 5e8);
    assert.equal(quantityBytes("12"), 12);
    assert.equal(quantityBytes("1Gb"), undefined);
  });

  it("checks its configuration section by field", () => {
    assert.deepEqual(parseOpenBaoConfig({}, "targets.openbao"), {
      observeOnly: false,
      concurrency: 2,
      resyncMs: 600_000,
      pollMs: 3_000,
      clusterDomain: "cluster.local",
      openBaoAudience: "openbao-internal",
    });
    assert.throws(() => parseOpenBaoConfig({ observeonly: true }, "targets.openbao"), ConfigError);
    assert.throws(
      () => parseOpenBaoConfig({ clusterDomain: "Bad Domain" }, "targets.openbao"),
      /targets\.openbao\.clusterDomain/,
    );
    assert.throws(() => parseOpenBaoConfig({ concurrency: 0 }, "targets.openbao"), /concurrency/);
    assert.equal(parseOpenBaoConfig({ observeOnly: true }, "targets.openbao").observeOnly, true);
    assert.throws(
      () => parseOpenBaoConfig({ observeOnly: "yes" }, "targets.openbao"),
      /targets\.openbao\.observeOnly/,
    );
  });
});

describe("openbao rollout hash", () => {
  it("ignores the retry_join peer list but not other settings", async () => {
    const { renderConfig } = await import("../../src/targets/openbao/workload/config/index.js");
    const { rolloutHash } = await import("../../src/targets/openbao/workload/statefulsets/hash.js");
    const three = renderConfig(cluster({ replicas: 3 }), {});
    const five = renderConfig(cluster({ replicas: 5 }), {});
    assert.notEqual(three, five, "the peer list is in the config");
    assert.equal(rolloutHash(three), rolloutHash(five));
    const louder = renderConfig(cluster({ replicas: 3, configuration: { logLevel: "debug" } }), {});
    assert.notEqual(rolloutHash(three), rolloutHash(louder));
    assert.ok(!/retry_join/.test(three.replace(/^[ \t]*retry_join[ \t]*\{[\s\S]*?^[ \t]*\}[ \t]*\n?/gm, "")));
  });

  it("does not restart a promoted blue-green revision whose config stops joining as a non-voter", async () => {
    const { renderConfig } = await import("../../src/targets/openbao/workload/config/index.js");
    const { rolloutHash } = await import("../../src/targets/openbao/workload/statefulsets/hash.js");
    const c = cluster({ replicas: 3 });
    const joining = renderConfig(c, {
      revision: "abc123",
      nonVoter: true,
      peers: ["blue-0.x", "blue-1.x"],
    });
    const serving = renderConfig(c, { revision: "abc123" });
    assert.match(joining, /retry_join_as_non_voter\s*=\s*true/);
    assert.doesNotMatch(serving, /retry_join_as_non_voter/);
    assert.equal(rolloutHash(joining), rolloutHash(serving));
    const otherRevision = renderConfig(c, { revision: "def456" });
    assert.notEqual(otherRevision, serving, "the revision is in the config");
  });
});
