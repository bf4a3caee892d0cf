import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AcknowledgeDataLossAnnotation } from "../../src/apis/openbaocluster-names.js";
import type { Pass } from "../../src/targets/openbao/steps/context.js";
import { blockedOf } from "../../src/targets/openbao/steps/index.js";
import { lostDataStep } from "../../src/targets/openbao/steps/lost-data.js";
import { judgeLostData, type LostDataFacts } from "../../src/targets/openbao/workload/init/lost-data.js";

const lost: LostDataFacts = {
  initializedBy: "status",
  pod0Initialized: false,
  peerInitialized: false,
  pod0: "bao-0",
  claim: { name: "data-bao-0", uid: "u-new" },
  rootTokenSecret: "bao-root-token",
  acknowledgement: undefined,
};

describe("openbao lost-data guard (pure)", () => {
  it("initialized before, pod 0 uninitialized, no peer: lost, naming the claim uid to acknowledge", () => {
    const v = judgeLostData(lost);
    assert.equal(v.kind, "lost");
    assert.match(v.kind === "lost" ? v.message : "", /the status says OpenBao was initialized/);
    assert.ok(v.kind === "lost" && v.message.includes(`${AcknowledgeDataLossAnnotation}=u-new`));
    const byToken = judgeLostData({ ...lost, initializedBy: "root-token Secret" });
    assert.match(byToken.kind === "lost" ? byToken.message : "", /the root-token Secret says/);
  });

  it("first boot, pod 0 initialized, an unanswered pod 0 or an initialized peer: intact", () => {
    assert.equal(judgeLostData({ ...lost, initializedBy: undefined }).kind, "intact");
    assert.equal(judgeLostData({ ...lost, pod0Initialized: true }).kind, "intact");
    assert.equal(judgeLostData({ ...lost, pod0Initialized: undefined }).kind, "intact");
    assert.equal(judgeLostData({ ...lost, peerInitialized: true }).kind, "intact");
  });

  it("only the current claim's uid acknowledges; another uid says so", () => {
    assert.equal(judgeLostData({ ...lost, acknowledgement: "u-new" }).kind, "acknowledged");
    const old = judgeLostData({ ...lost, acknowledgement: "u-old" });
    assert.equal(old.kind, "lost");
    assert.match(old.kind === "lost" ? old.message : "", /names another claim/);
    const noClaim = judgeLostData({ ...lost, claim: undefined, acknowledgement: "u-new" });
    assert.equal(noClaim.kind, "lost");
  });
});

// The step around the verdict, with a fake cache and a fake OpenBao: what it reads and asks.
describe("openbao lost-data step", () => {
  type Obj = Record<string, unknown>;
  const pod = (name: string, initialized?: string): Obj => ({
    metadata: {
      name,
      labels: {
        "openbao.org/cluster": "bao",
        "openbao.org/component": "server",
        ...(initialized ? { "openbao-initialized": initialized } : {}),
      },
    },
    status: { phase: "Running" },
  });
  const setup = (o: { pods: Obj[]; initialized: boolean; rootToken?: boolean; ack?: string }) => {
    const asked: string[] = [];
    const events: string[] = [];
    const objects = new Map<string, Obj>();
    for (const p of o.pods) objects.set(`Pod/${(p["metadata"] as Obj)["name"]}`, p);
    if (o.rootToken) objects.set("Secret/bao-root-token", { metadata: { name: "bao-root-token" } });
    objects.set("PersistentVolumeClaim/data-bao-0", { metadata: { name: "data-bao-0", uid: "u1" } });
    const cluster = {
      metadata: {
        name: "bao",
        namespace: "ns",
        ...(o.ack ? { annotations: { [AcknowledgeDataLossAnnotation]: o.ack } } : {}),
      },
      spec: { version: "2.4.1", replicas: 3, storage: { size: "1Gi" }, tls: { enabled: false } },
      status: { initialized: o.initialized },
    };
    const reader = {
      get: async (t: { kind: string }, name: string) => {
        asked.push(`get ${t.kind}/${name}`);
        return objects.get(`${t.kind}/${name}`);
      },
      list: async () => o.pods,
    };
    const pass = {
      cluster,
      ctx: {
        reader,
        events: { record: (_o: unknown, e: { reason: string }) => events.push(e.reason) },
        log: { warn() {}, info() {}, debug() {} },
        signal: new AbortController().signal,
      },
      deps: {
        config: { clusterDomain: "cluster.local" },
        baoClient: () => ({
          health: async () => {
            asked.push("health");
            return { initialized: false, sealed: true };
          },
        }),
      },
      result: { initialized: o.initialized, desiredReplicas: 3, readyReplicas: 0 },
    } as unknown as Pass;
    return { pass, asked, events };
  };

  it("a settled cluster (pod 0 labelled initialized) costs one cached pod read and no OpenBao request", async () => {
    const { pass, asked } = setup({ pods: [pod("bao-0", "true")], initialized: true });
    assert.equal((await lostDataStep(pass)).kind, "continue");
    assert.deepEqual(asked, ["get Pod/bao-0"]);
  });

  it("first boot without a root-token Secret asks OpenBao nothing", async () => {
    const { pass, asked } = setup({ pods: [pod("bao-0")], initialized: false });
    assert.equal((await lostDataStep(pass)).kind, "continue");
    assert.deepEqual(asked, ["get Pod/bao-0", "get Secret/bao-root-token"]);
  });

  it("stops with DataLost (a failure: Degraded) when nothing holds the data; a voter holding it lets pod 0 rejoin", async () => {
    const lostPass = setup({ pods: [pod("bao-0", "false")], initialized: false, rootToken: true });
    const out = await lostDataStep(lostPass.pass);
    assert.ok(out.kind === "fail");
    assert.equal(out.reason, "DataLost");
    // Reported (Degraded) under the initialization step it guards.
    assert.deepEqual(blockedOf({ ...out, stage: "lost-data" }), {
      step: "initialization",
      reason: "DataLost",
      message: out.message,
      failed: true,
    });
    const rejoin = setup({ pods: [pod("bao-0", "false"), pod("bao-1", "true")], initialized: true });
    assert.equal((await lostDataStep(rejoin.pass)).kind, "continue");
  });

  it("the acknowledgement of this claim lets initialization run, with an event", async () => {
    const { pass, events } = setup({ pods: [pod("bao-0", "false")], initialized: true, ack: "u1" });
    assert.equal((await lostDataStep(pass)).kind, "continue");
    assert.equal(pass.result.initialized, false);
    assert.deepEqual(events, ["DataLossAcknowledged"]);
  });
});
