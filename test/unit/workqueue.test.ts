import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { exponentialDelay } from "../../src/runtime/backoff.js";
import { Controller, requeueAfter } from "../../src/runtime/controller.js";
import type { Informer, InformerHandler } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { WorkQueue } from "../../src/runtime/workqueue.js";

describe("WorkQueue", () => {
  it("queues a key that is added twice only once", async () => {
    const q = new WorkQueue({ name: "t-dedup" });
    q.add("a");
    q.add("b");
    q.add("a");
    assert.equal(q.length, 2);
    assert.equal(await q.get(), "a");
    assert.equal(await q.get(), "b");
    assert.equal(q.length, 0);
  });

  it("never hands out a key that is being processed; re-adds it on done", async () => {
    const q = new WorkQueue({ name: "t-processing" });
    q.add("a");
    const first = await q.get();
    q.add("a");
    assert.equal(q.length, 0, "a key re-added while processing must wait");
    q.add("b");
    assert.equal(await q.get(), "b");
    q.done(first!);
    assert.equal(q.length, 1);
    assert.equal(await q.get(), "a");
  });

  it("addFirst hands the key out before those waiting, once, and not while it is processed", async () => {
    const q = new WorkQueue({ name: "t-first" });
    for (const k of ["a", "b", "c"]) q.add(k);
    assert.equal(await q.get(), "a");
    q.addFirst("z");
    q.addFirst("b");
    assert.equal(q.length, 3, "b was waiting already: not queued twice");
    assert.equal(await q.get(), "z");
    q.addFirst("a");
    assert.equal(q.length, 2, "a is being processed: it waits for done");
    q.done("a");
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ["b", "c", "a"]);
    // Past the compaction point of the backing array, the front still comes first.
    for (let i = 0; i < 3000; i++) q.add(`k${i}`);
    for (let i = 0; i < 2000; i++) await q.get();
    q.addFirst("front");
    assert.equal(await q.get(), "front");
    assert.equal(await q.get(), "k2000");
  });

  // Timing is checked by order, not by elapsed-time ceilings: timers fire in the order they are
  // due however busy the machine is, while a ceiling breaks on a loaded 2-core runner.
  it("doubles the backoff per failure up to the cap (pure)", () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 10, 100].map((n) => exponentialDelay(n, 20, 300)),
      [0, 20, 40, 80, 160, 300, 300, 300],
    );
  });

  it("backs off exponentially per key and forget resets it", async () => {
    const q = new WorkQueue({ name: "t-backoff", baseDelayMs: 20, maxDelayMs: 1000 });
    const t0 = Date.now();
    q.addRateLimited("a");
    assert.equal(await q.get(), "a");
    // A timer never fires early (a millisecond of rounding aside).
    assert.ok(Date.now() - t0 >= 19, "the first retry waits the base delay");
    q.done("a");
    // Second failure: 40 ms, so it comes after a 30 ms key and before a 60 ms one.
    q.addAfter("before", 30);
    q.addRateLimited("a");
    q.addAfter("after", 60);
    const order = [await q.get(), await q.get(), await q.get()];
    assert.deepEqual(order, ["before", "a", "after"]);
    for (const k of order) q.done(k!);
    assert.equal(q.numRequeues("a"), 2);
    q.forget("a");
    assert.equal(q.numRequeues("a"), 0);
  });

  it("caps the backoff at maxDelay", async () => {
    const q = new WorkQueue({ name: "t-cap", baseDelayMs: 5, maxDelayMs: 30 });
    for (let i = 0; i < 19; i++) q.addRateLimited("k");
    assert.equal(await q.get(), "k");
    q.done("k");
    // The 20th failure would be 5·2^19 ms uncapped; capped it is due long before a 1 s key.
    q.addAfter("later", 1000);
    q.addRateLimited("k");
    assert.equal(await q.get(), "k");
    q.done("k");
    assert.equal(q.delayedCount, 1, "only the 1 s key is still waiting");
    q.shutDown();
  });

  it("addAfter keeps the earliest time and delivers once", async () => {
    const q = new WorkQueue({ name: "t-after" });
    q.addAfter("a", 500);
    q.addAfter("a", 30);
    q.addAfter("a", 400);
    q.addAfter("b", 200);
    assert.equal(q.delayedCount, 2);
    assert.equal(await q.get(), "a", "a at 30 ms, not 400 or 500, comes before b at 200 ms");
    q.done("a");
    assert.equal(await q.get(), "b");
    q.done("b");
    assert.equal(q.delayedCount, 0, "no second delivery of a is pending");
    assert.equal(q.length, 0);
  });

  it("shutDown releases waiting workers and stops handing out keys", async () => {
    const q = new WorkQueue({ name: "t-shutdown" });
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add("x");
    assert.equal(await q.get(), undefined);
  });
});

describe("Controller", () => {
  it("never runs one key twice at once, with many workers and many adds", async () => {
    const running = new Set<string>();
    let overlaps = 0;
    let runs = 0;
    const c = new Controller({
      name: "t-concurrency",
      log: silentLogger(),
      concurrency: 8,
      reconcile: async (key) => {
        if (running.has(key)) overlaps++;
        running.add(key);
        runs++;
        await delay(2);
        running.delete(key);
        return undefined;
      },
    });
    c.start();
    for (let round = 0; round < 50; round++) {
      for (let k = 0; k < 5; k++) c.queue.add(`k${k}`);
      await delay(1);
    }
    // Wait for the queue to empty itself, however long a busy machine takes.
    while (c.queue.length > 0 || c.queue.processingCount > 0) await delay(5);
    await c.stop();
    assert.equal(overlaps, 0);
    assert.ok(runs >= 5 && runs < 250, `dedup collapsed adds: ${runs} runs`);
  });

  it("retries a failing key with backoff, then stops when it succeeds", async () => {
    let calls = 0;
    let succeeded!: () => void;
    const success = new Promise<void>((r) => {
      succeeded = r;
    });
    const c = new Controller({
      name: "t-retry",
      log: silentLogger(),
      baseDelayMs: 5,
      reconcile: async () => {
        calls++;
        if (calls < 4) throw new Error("boom");
        succeeded();
        return undefined;
      },
    });
    c.start();
    c.queue.add("a");
    await success;
    // Nothing more is scheduled for the key once it succeeded.
    while (c.queue.processingCount > 0) await delay(5);
    assert.equal(c.queue.delayedCount, 0);
    await c.stop();
    assert.equal(calls, 4);
    assert.equal(c.queue.numRequeues("a"), 0, "success forgets the failures");
  });

  it("requeues after the delay the reconcile asked for", async () => {
    const times: number[] = [];
    let third!: () => void;
    const thirdRun = new Promise<void>((r) => {
      third = r;
    });
    const c = new Controller({
      name: "t-requeue",
      log: silentLogger(),
      requeueJitter: 0,
      reconcile: async () => {
        times.push(Date.now());
        if (times.length === 3) third();
        return times.length < 3 ? { requeueAfterMs: 40 } : undefined;
      },
    });
    c.start();
    c.queue.add("a");
    await thirdRun;
    while (c.queue.processingCount > 0) await delay(5);
    assert.equal(c.queue.delayedCount, 0, "no fourth run is scheduled");
    await c.stop();
    assert.equal(times.length, 3);
    assert.ok(times[1]! - times[0]! >= 38);
    assert.ok(times[2]! - times[1]! >= 38);
  });

  it("stop waits for the reconcile in flight", async () => {
    let finished = false;
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    const c = new Controller({
      name: "t-drain",
      log: silentLogger(),
      reconcile: async () => {
        started();
        await delay(80);
        finished = true;
        return undefined;
      },
    });
    c.start();
    c.queue.add("a");
    await running;
    await c.stop();
    assert.equal(finished, true);
  });
});

describe("Controller watches: one event, one pass", () => {
  const obj = (name: string, owner?: string) =>
    ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: "ns",
        ...(owner
          ? {
              ownerReferences: [
                { apiVersion: "example.test/v1", kind: "Thing", name: owner, uid: "u", controller: true },
              ],
            }
          : {}),
      },
    }) as unknown as KubeObject;

  for (const how of ["watchOwned", "watchMapped"] as const)
    it(`${how}: an update naming the same key through the old and the new object runs it once, not again past its result`, async () => {
      let calls = 0;
      let first!: () => void;
      const started = new Promise<void>((r) => {
        first = r;
      });
      const c = new Controller({
        name: `t-once-${how}`,
        log: silentLogger(),
        reconcile: async () => {
          calls++;
          first();
          // A long wait asked for: a second pass now would ignore it.
          return requeueAfter(3_600_000);
        },
      });
      let handler!: InformerHandler<KubeObject>;
      const informer = {
        addHandler: (h: InformerHandler<KubeObject>) => {
          handler = h;
        },
      } as unknown as Informer<KubeObject>;
      if (how === "watchOwned")
        c.watchOwned(informer, { group: "example.test", kind: "Thing", namespaced: true });
      else c.watchMapped(informer, () => ["ns/thing"]);
      c.start();
      handler.update!(obj("cm", "thing"), obj("cm", "thing"));
      await started;
      await c.queue.drain();
      // The pass is over: nothing may be queued to run it again (the requeue is an hour away).
      const queued = c.queue.length;
      await c.stop();
      assert.equal(queued, 0, "a second pass queued by the same event");
      assert.equal(calls, 1);
    });
});
