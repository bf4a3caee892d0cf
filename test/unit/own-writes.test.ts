import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { Controller, done } from "../../src/runtime/controller.js";
import type { InformerHandler } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { OwnWrites } from "../../src/runtime/own-writes.js";
import { StatusWriter } from "../../src/runtime/status.js";
import type { KubeObject } from "../../src/runtime/types.js";

const K = "ns/a";

describe("runtime own writes: what the cache has not shown yet", () => {
  it("a write is pending until the cache receives exactly its resourceVersion; an older event does not show it", () => {
    const w = new OwnWrites();
    const shown: string[] = [];
    w.onShown((k) => shown.push(k));
    w.wrote(K, "7", "5");
    assert.equal(w.pending(K), true);
    w.received(K, "6");
    assert.equal(w.pending(K), true, "the event of an earlier write leaves ours pending");
    assert.deepEqual(shown, []);
    w.received(K, "7");
    assert.equal(w.pending(K), false);
    assert.deepEqual(shown, [K], "the key is announced once every write to it is shown");
  });

  it("answers of concurrent writes arriving out of order: each write waits for its own event", () => {
    // The server made W (10) then A (11) and B (12); W's answer came last. Keeping only the last
    // answer would call the object shown once W's event arrived, with A and B still missing.
    const w = new OwnWrites();
    w.wrote(K, "11", "9");
    w.wrote(K, "12", "9");
    w.wrote(K, "10", "9");
    w.received(K, "10");
    assert.equal(w.pending(K), true, "A and B are not in the cache yet");
    assert.equal(w.waitsFor(K, "12"), true);
    w.received(K, "11");
    w.received(K, "12");
    assert.equal(w.pending(K), false);
  });

  it("a write that changed nothing returns a version the cache holds or held: nothing is waited for", () => {
    const w = new OwnWrites();
    w.wrote(K, "5", "5");
    assert.equal(w.pending(K), false, "the cache holds it");
    w.received(K, "6");
    w.received(K, "8");
    w.wrote(K, "6", "8");
    assert.equal(w.pending(K), false, "the cache held it before it moved on");
  });

  it("the object leaving the cache, or a list begun after the write, shows every write to it", () => {
    let now = 0;
    const w = new OwnWrites({ now: () => now });
    w.wrote(K, "7", "5");
    w.received(K, undefined);
    assert.equal(w.pending(K), false, "deleted");
    now = 10;
    w.wrote(K, "9", "5");
    w.wrote("other/b", "3", undefined);
    w.listed(5, (k) => k.startsWith("ns/"));
    assert.equal(w.pending(K), true, "a list begun before the write does not hold it");
    w.listed(10, (k) => k.startsWith("ns/"));
    assert.equal(w.pending(K), false);
    assert.equal(w.pending("other/b"), true, "another namespace's list");
  });

  it("a write whose event never comes is given up after the memory", () => {
    let now = 0;
    const w = new OwnWrites({ now: () => now, memoryMs: 1000 });
    const shown: string[] = [];
    w.onShown((k) => shown.push(k));
    w.wrote(K, "7", "5");
    now = 999;
    assert.equal(w.pending(K), true);
    assert.equal(w.remainingMs(K), 1);
    now = 1001;
    assert.equal(w.pending(K), false);
    assert.deepEqual(shown, [K]);
  });

  it("orders copies by when the cache received them, never by comparing resourceVersions", () => {
    const w = new OwnWrites();
    // Opaque versions whose string and number orders disagree with the watch's.
    w.received(K, "b9");
    w.received(K, "a10");
    assert.equal(w.receivedBefore(K, "b9", "a10"), true);
    assert.equal(w.receivedBefore(K, "a10", "b9"), false);
    assert.equal(w.receivedBefore(K, "zz", "a10"), false, "unknown: not called older");
  });
});

/** An informer double: the controller only registers handlers and asks about own writes. */
function primary(own: OwnWrites) {
  const handlers: InformerHandler<KubeObject>[] = [];
  return {
    handlers,
    ownWrites: own,
    ownWritePending: (key: string) => own.pending(key),
    addHandler: (h: InformerHandler<KubeObject>) => handlers.push(h),
  };
}

describe("runtime controller: a pass never starts from a cache behind its own write", () => {
  it("defers the pass until the watch delivers the write, then runs it once", async () => {
    const own = new OwnWrites();
    const passes: number[] = [];
    const c = new Controller({
      name: "own-writes-defer",
      log: silentLogger(),
      reconcile: async () => {
        passes.push(performance.now());
        return done();
      },
    });
    c.watchPrimary(primary(own) as never);
    c.start();
    own.wrote(K, "7", "5");
    c.queue.add(K);
    // The queue hands the key out and the controller gives it back: wait for that, not for time.
    while (c.queue.length > 0 || c.queue.processingCount > 0) await delay(2);
    assert.equal(passes.length, 0, "no pass on a cache one write behind");
    own.received(K, "7");
    while (passes.length === 0) await delay(2);
    while (c.queue.processingCount > 0) await delay(2);
    assert.equal(passes.length, 1);
    await c.stop();
  });

  it("a write whose event never comes holds the pass only for the memory's bound", async () => {
    const own = new OwnWrites({ memoryMs: 50 });
    let passes = 0;
    const c = new Controller({
      name: "own-writes-bound",
      log: silentLogger(),
      reconcile: async () => {
        passes++;
        return done();
      },
    });
    c.watchPrimary(primary(own) as never);
    c.start();
    own.wrote(K, "7", "5");
    c.queue.add(K);
    const started = performance.now();
    while (passes === 0) await delay(5);
    assert.ok(performance.now() - started >= 40, "held until the bound");
    await c.stop();
  });
});

describe("runtime status writer with its cache: the memory goes when the cache shows the write", () => {
  type Obj = KubeObject & { status?: { keys?: string[] } };
  const thing = (rv: string, keys?: string[]): Obj => ({
    apiVersion: "example.dev/v1",
    kind: "Thing",
    metadata: { name: "a", namespace: "ns", uid: "u1", resourceVersion: rv },
    ...(keys ? { status: { keys } } : {}),
  });
  function cached() {
    const own = new OwnWrites();
    const handlers: InformerHandler<KubeObject>[] = [];
    let held: Obj | undefined;
    return {
      own,
      set: (o: Obj | undefined) => {
        held = o;
      },
      deliver: (old: Obj, next: Obj) => {
        held = next;
        for (const h of handlers) h.update?.(old, next);
        own.received(K, next.metadata.resourceVersion);
      },
      cache: {
        ownWrites: own,
        addHandler: (h: InformerHandler<KubeObject>) => handlers.push(h),
        get: () => held,
      },
    };
  }

  it("keeps a written status while its write is outstanding, drops it when the watch delivers it", () => {
    const c = cached();
    const w = new StatusWriter<Obj["status"]>({
      client: undefined as never,
      type: { group: "example.dev", version: "v1", kind: "Thing", plural: "things", namespaced: true },
      fieldManager: "test",
      cache: c.cache,
    });
    c.set(thing("b1"));
    // Opaque versions: "b1" is the older one although it sorts after "a2".
    c.own.received(K, "b1");
    w.remember(K, thing("a2", ["x"]));
    c.own.wrote(K, "a2", "b1");
    assert.deepEqual(w.freshest(K, thing("b1")).status?.keys, ["x"], "the cache is behind the write");
    c.deliver(thing("b1"), thing("a2", ["x"]));
    assert.deepEqual(
      w.freshest(K, thing("b1")).status,
      undefined,
      "dropped once delivered: an old copy handed in later is taken as it is (the pass reads the cache)",
    );
  });

  it("a copy the cache received before the write keeps getting the written status", () => {
    const c = cached();
    const w = new StatusWriter<Obj["status"]>({
      client: undefined as never,
      type: { group: "example.dev", version: "v1", kind: "Thing", plural: "things", namespaced: true },
      fieldManager: "test",
      cache: c.cache,
    });
    c.own.received(K, "b1");
    w.remember(K, thing("a2", ["x"]));
    c.own.wrote(K, "a2", "b1");
    c.own.received(K, "a2");
    // A lagging read (vault-status-stale makes one) hands in the copy from before the write.
    assert.deepEqual(w.freshest(K, thing("b1")).status?.keys, ["x"]);
    assert.equal(w.freshest(K, thing("a2")).status, undefined, "the written copy itself: memory dropped");
  });
});
