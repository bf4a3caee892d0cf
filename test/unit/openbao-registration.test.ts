import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { endpointLabel } from "../../src/targets/openbao/baoclient/client.js";
import { AutopilotChecks, autopilotStamp } from "../../src/targets/openbao/workload/autopilot/autopilot.js";
import {
  podRegistration,
  registeredPeers,
  registeredState,
  registrationMoved,
} from "../../src/targets/openbao/workload/registration/state.js";

// The leader, seal and version state read from the labels OpenBao's Kubernetes service
// registration patches on its pods (openbao-active, -sealed, -initialized, -version).

interface PodShape {
  active?: string;
  sealed?: string;
  initialized?: string;
  version?: string;
  phase?: string;
  terminating?: boolean;
}

function pod(name: string, s: PodShape = {}): KubeObject {
  const labels: Record<string, string> = { "openbao.org/cluster": "demo", "openbao.org/component": "server" };
  if (s.active !== undefined) labels["openbao-active"] = s.active;
  if (s.sealed !== undefined) labels["openbao-sealed"] = s.sealed;
  if (s.initialized !== undefined) labels["openbao-initialized"] = s.initialized;
  if (s.version !== undefined) labels["openbao-version"] = s.version;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "ns",
      labels,
      ...(s.terminating ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    status: { phase: s.phase ?? "Running" },
  };
}

const registered = (active: boolean, version = "2.7.2"): PodShape => ({
  active: String(active),
  sealed: "false",
  initialized: "true",
  version,
});

describe("OpenBao's service-registration labels → cluster state", () => {
  it("a settled cluster: the one active pod leads, pod 0's seal state and version, no gap", () => {
    const s = registeredState(
      [pod("demo-0", registered(false)), pod("demo-1", registered(true)), pod("demo-2", registered(false))],
      "demo-0",
    );
    assert.deepEqual(s, {
      activeLeader: "demo-1",
      pod0: { sealed: false, initialized: true, version: "2.7.2" },
      gaps: [],
    });
  });

  it("missing labels (an image without the registration, OpenBao not started yet) leave gaps", () => {
    const s = registeredState([pod("demo-0"), pod("demo-1"), pod("demo-2")], "demo-0");
    assert.equal(s.activeLeader, undefined);
    assert.equal(s.pod0, undefined);
    assert.equal(s.gaps.length, 2);
    assert.match(
      s.gaps[0]!,
      /no pod says it is active and demo-0, demo-1, demo-2 carry no openbao-active label/,
    );
    assert.match(s.gaps[1]!, /demo-0 carries no openbao-sealed\/openbao-initialized labels/);
  });

  it("one active pod is the leader even while a new pod has no labels yet", () => {
    const s = registeredState(
      [pod("demo-0", registered(true)), pod("demo-1", registered(false)), pod("demo-2")],
      "demo-0",
    );
    assert.equal(s.activeLeader, "demo-0");
    assert.deepEqual(s.gaps, []);
  });

  it("no active pod among fully labelled ones: no leader, said as such (not unknown)", () => {
    const s = registeredState([pod("demo-0", registered(false)), pod("demo-1", registered(false))], "demo-0");
    assert.equal(s.activeLeader, "");
    assert.deepEqual(s.gaps, []);
  });

  it("two pods saying active cannot be told apart: a gap, no leader claimed", () => {
    const s = registeredState(
      [pod("demo-0", registered(true)), pod("demo-1", registered(true)), pod("demo-2", registered(false))],
      "demo-0",
    );
    assert.equal(s.activeLeader, undefined);
    assert.deepEqual(s.gaps, ["pods demo-0, demo-1 each say they are active"]);
    // pod 0's own state is still known.
    assert.deepEqual(s.pod0, { sealed: false, initialized: true, version: "2.7.2" });
  });

  it("a terminating or not-running pod's labels do not count: the old leader going is no leader", () => {
    const s = registeredState(
      [
        pod("demo-0", { ...registered(true), terminating: true }),
        pod("demo-1", registered(true)),
        pod("demo-2", { ...registered(false), phase: "Pending" }),
      ],
      "demo-0",
    );
    assert.equal(s.activeLeader, "demo-1");
    assert.deepEqual(s.gaps, ["pod demo-0 is not running"]);
    assert.equal(s.pod0, undefined);
  });

  it("mixed versions mid-upgrade: the version is pod 0's, as before (it is replaced last)", () => {
    const s = registeredState(
      [
        pod("demo-0", registered(false, "2.6.2")),
        pod("demo-1", registered(true, "2.7.2")),
        pod("demo-2", registered(false, "2.7.2")),
      ],
      "demo-0",
    );
    assert.equal(s.pod0?.version, "2.6.2");
    assert.equal(s.activeLeader, "demo-1");
  });

  it("a sealed pod 0 says sealed; a pod 0 without a version label still answers", () => {
    const s = registeredState(
      [
        pod("demo-0", { active: "false", sealed: "true", initialized: "true" }),
        pod("demo-1", registered(true)),
      ],
      "demo-0",
    );
    assert.deepEqual(s.pod0, { sealed: true, initialized: true });
    assert.deepEqual(s.gaps, []);
  });

  it("blue-green: a green pod can lead; pod 0 is the serving revision's", () => {
    const s = registeredState(
      [
        pod("demo-0", registered(false)),
        pod("demo-g1-0", registered(true)),
        pod("demo-g1-1", registered(false)),
      ],
      "demo-g1-0",
    );
    assert.equal(s.activeLeader, "demo-g1-0");
    assert.equal(s.pod0?.initialized, true);
  });

  it("values other than true/false are no answer", () => {
    assert.deepEqual(
      podRegistration({ "openbao-active": "yes", "openbao-sealed": "False", "openbao-initialized": "" }),
      {},
    );
  });

  it("only registration labels, termination and phase changes wake the cluster", () => {
    const a = pod("demo-0", registered(false));
    assert.equal(registrationMoved(undefined, a), true);
    assert.equal(registrationMoved(a, { ...a, status: { phase: "Running", podIP: "10.0.0.9" } }), false);
    assert.equal(registrationMoved(a, pod("demo-0", registered(true))), true);
    assert.equal(registrationMoved(a, pod("demo-0", { ...registered(false), sealed: "true" })), true);
    assert.equal(registrationMoved(a, pod("demo-0", { ...registered(false), terminating: true })), true);
    assert.equal(registrationMoved(a, pod("demo-0", { ...registered(false), phase: "Failed" })), true);
  });
  it("counts the running pods of every revision as active, standby or sealed; unlabelled and leaving pods in none", () => {
    const peers = registeredPeers([
      pod("demo-0", registered(false)),
      pod("demo-1", registered(true)),
      pod("demo-2", { active: "false", sealed: "true", initialized: "true" }),
      pod("demo-green-0", registered(false)),
      pod("demo-3"),
      pod("demo-4", { ...registered(false), terminating: true }),
      pod("demo-5", { ...registered(false), phase: "Pending" }),
    ]);
    assert.deepEqual(peers, { active: 1, standby: 2, sealed: 1 });
    assert.deepEqual(registeredPeers([]), { active: 0, standby: 0, sealed: 0 });
  });
});

describe("Autopilot is checked once per stamp", () => {
  const cluster = (over: Partial<OpenBaoCluster> = {}): OpenBaoCluster =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "demo", namespace: "ns", uid: "u1" },
      spec: { version: "2.7.2", storage: { size: "1Gi" } },
      status: { activeLeader: "demo-0" },
      ...over,
    }) as OpenBaoCluster;

  it("a new spec, leader or uid changes the stamp; a repeated pass does not", () => {
    const base = autopilotStamp(cluster());
    assert.equal(autopilotStamp(cluster()), base);
    assert.notEqual(autopilotStamp(cluster({ status: { activeLeader: "demo-1" } })), base);
    assert.notEqual(
      autopilotStamp(
        cluster({
          spec: {
            version: "2.7.2",
            storage: { size: "1Gi" },
            configuration: { raft: { autopilot: { minQuorum: 5 } } },
          } as OpenBaoCluster["spec"],
        }),
      ),
      base,
    );
    assert.notEqual(
      autopilotStamp(cluster({ metadata: { name: "demo", namespace: "ns", uid: "u2" } })),
      base,
    );
    const checks = new AutopilotChecks();
    assert.equal(checks.current("ns/demo", base), false);
    checks.remember("ns/demo", base);
    assert.equal(checks.current("ns/demo", base), true);
    checks.forget("ns/demo");
    assert.equal(checks.current("ns/demo", base), false);
  });
});

describe("OpenBao request counter labels", () => {
  it("drops the query and folds login mounts", () => {
    assert.equal(endpointLabel("/v1/sys/health?standbyok=true"), "/v1/sys/health");
    assert.equal(endpointLabel("/v1/auth/kubernetes/login"), "/v1/auth/*/login");
    assert.equal(endpointLabel("/v1/sys/leader"), "/v1/sys/leader");
  });
});
