import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { InformerWhenServed } from "../../src/runtime/when-served.js";

// The decision alone, over a discovery the test changes: which informer runs for an optional kind
// as its versions come and go. The manager's wiring (CRD watch, reader) is proven on the real API
// server by test/integration/openbao-quiet-reads.test.ts.

const ROUTE = { group: "example.org", kind: "Route", versions: ["v1", "v1beta1"] };

function harness() {
  /** apiVersion → served, as discovery would answer now. */
  const served = new Set<string>();
  let failing = false;
  const started: string[] = [];
  const retired: string[] = [];
  const asked: string[] = [];
  let gone = 0;
  let stopped = false;
  const w = new InformerWhenServed(ROUTE, {
    async find(apiVersion, kind) {
      asked.push(apiVersion);
      if (failing) throw new Error("discovery of example.org/v1 failed: 503");
      if (!served.has(apiVersion)) return undefined;
      const version = apiVersion.split("/")[1]!;
      return { group: "example.org", version, kind, plural: "routes", namespaced: true } as ResourceType;
    },
    start: (type) => {
      started.push(type.version);
      return { type } as unknown as Informer<KubeObject>;
    },
    retire: (inf) => {
      retired.push(inf.type.version);
    },
    gone: () => {
      gone++;
    },
    stopped: () => stopped,
    log: silentLogger(),
  });
  return {
    w,
    served,
    started,
    retired,
    asked,
    gone: () => gone,
    fail: (v: boolean) => {
      failing = v;
    },
    stop: () => {
      stopped = true;
    },
  };
}

describe("an informer for a kind while it is served", () => {
  it("runs none while the kind is not served, one once it is, and retires it when the kind goes", async () => {
    const h = harness();
    await h.w.check();
    assert.deepEqual(h.started, []);
    assert.equal(h.w.informer, undefined);
    h.served.add("example.org/v1beta1");
    await h.w.check();
    await h.w.check();
    assert.deepEqual(h.started, ["v1beta1"], "started once, on the version served");
    h.served.delete("example.org/v1beta1");
    await h.w.check();
    assert.deepEqual(h.retired, ["v1beta1"]);
    assert.equal(h.w.informer, undefined);
    // The owner hears of the kind going (its objects' watchers cannot: their informer is gone), once.
    assert.equal(h.gone(), 1);
    await h.w.check();
    assert.equal(h.gone(), 1, "not served before, not served now: nothing went");
  });

  it("a kind moving to another version served has not gone", async () => {
    const h = harness();
    h.served.add("example.org/v1beta1");
    await h.w.check();
    h.served.add("example.org/v1");
    await h.w.check();
    assert.deepEqual(h.retired, ["v1beta1"]);
    assert.equal(h.gone(), 0);
  });

  it("moves to the preferred version once it is served, and back when it goes", async () => {
    const h = harness();
    h.served.add("example.org/v1beta1");
    await h.w.check();
    h.served.add("example.org/v1");
    await h.w.check();
    assert.deepEqual(h.started, ["v1beta1", "v1"]);
    assert.deepEqual(h.retired, ["v1beta1"]);
    assert.equal(h.w.informer?.type.version, "v1");
    h.served.delete("example.org/v1");
    await h.w.check();
    assert.deepEqual(h.started, ["v1beta1", "v1", "v1beta1"]);
    assert.deepEqual(h.retired, ["v1beta1", "v1"]);
  });

  it("leaves the running informer alone when discovery fails, and never rejects", async () => {
    const h = harness();
    h.served.add("example.org/v1");
    await h.w.check();
    h.fail(true);
    h.served.delete("example.org/v1");
    await h.w.check();
    assert.deepEqual(h.retired, [], "a failed look is not a kind gone");
    h.fail(false);
    await h.w.check();
    assert.deepEqual(h.retired, ["v1"]);
  });

  it("never runs two checks at once: one asked for meanwhile looks once more afterwards", async () => {
    const h = harness();
    const first = h.w.check();
    // Asked while the first is still looking, after the kind appeared: the first looks again.
    h.served.add("example.org/v1");
    const second = h.w.check();
    const third = h.w.check();
    await Promise.all([first, second, third]);
    assert.deepEqual(h.started, ["v1"]);
    // v1 is found on the first version asked, so each look asks once or twice; two looks in all.
    assert.ok(h.asked.length <= 4, `asked ${h.asked.join(", ")}`);
  });

  it("starts nothing once its manager stopped", async () => {
    const h = harness();
    h.served.add("example.org/v1");
    h.stop();
    await h.w.check();
    assert.deepEqual(h.started, []);
  });
});
