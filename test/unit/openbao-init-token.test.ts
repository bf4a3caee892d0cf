import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { Writes } from "../../src/targets/openbao/apply.js";
import type { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import type { ServiceContext } from "../../src/targets/openbao/services.js";
import { reconcileInit } from "../../src/targets/openbao/workload/init/init.js";

// OpenBao tells the root token once. A failed Secret write must not lose it, and must not hold the
// worker in a sleep loop either: the pass fails (the runtime backs it off) and a later pass stores
// the token it kept.

const cluster = {
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoCluster",
  metadata: { name: "tok", namespace: "ns", uid: "uid-tok" },
  spec: { version: "2.7.2", replicas: 1 },
} as unknown as OpenBaoCluster;

function harness(applyFailures: number) {
  const state = { initialized: false, inits: 0, applies: 0, stored: undefined as string | undefined };
  const events: string[] = [];
  const client = {
    apply: async (_t: unknown, body: KubeObject) => {
      state.applies++;
      if (state.applies <= applyFailures) throw new Error("etcdserver: request timed out");
      state.stored = Buffer.from((body["data"] as { token: string }).token, "base64").toString("utf8");
      return body;
    },
  } as unknown as KubeClient;
  const pod = { metadata: { name: "tok-0", namespace: "ns" }, status: { phase: "Running" } };
  const ctx: ServiceContext = {
    client,
    reader: {
      get: (async (type: { kind: string }) => (type.kind === "Pod" ? pod : undefined)) as never,
      list: (async () => []) as never,
    },
    owner: cluster,
    fieldManager: "test",
    log: silentLogger(),
    events: {
      record: (_o: unknown, e: { reason: string }) => events.push(e.reason),
    } as unknown as EventRecorder,
    now: () => new Date(),
  };
  const bao = {
    health: async () => ({ initialized: state.initialized, sealed: false }),
    init: async () => {
      state.inits++;
      state.initialized = true;
      return { rootToken: "s.the-only-copy" };
    },
  } as unknown as BaoClient;
  const pass = () => reconcileInit({ ctx, writes: new Writes(false), bao: async () => bao }, cluster);
  return { state, events, pass };
}

describe("openbao init: the root token survives a failed Secret write without a loop in the pass", () => {
  it("the failing pass throws after one write; the next pass stores the kept token, initializing once", async () => {
    const h = harness(1);
    await assert.rejects(h.pass(), (e: Error) => {
      assert.match(e.message, /could not store the root token in Secret ns\/tok-root-token/);
      assert.doesNotMatch(e.message, /the-only-copy/, "the token is never in an error");
      return true;
    });
    assert.equal(h.state.applies, 1, "one write per pass: the retry is the runtime's");
    assert.equal(h.state.stored, undefined);
    const next = await h.pass();
    assert.deepEqual(next, { done: true, selfInitialized: false });
    assert.equal(h.state.stored, "s.the-only-copy");
    assert.equal(h.state.inits, 1, "OpenBao is initialized once");
    assert.deepEqual(h.events, ["Initialized"]);
    // Stored: a later pass is the plain recovery of an initialized cluster, nothing kept any more.
    const after = await h.pass();
    assert.equal(after.done && after.recovered, true);
    assert.equal(h.state.applies, 2);
  });
});
