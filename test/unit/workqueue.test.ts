import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { Controller } from "../../src/runtime/controller.js";
import { silentLogger } from "../../src/runtime/log.js";
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

  it("backs off exponentially per key and forget resets it", async () => {
    const q = new WorkQueue({ name: "t-backoff", baseDelayMs: 20, maxDelayMs: 1000 });
    const t0 = Date.now();
    q.addRateLimited("a");
    assert.equal(await q.get(), "a");
    const d1 = Date.now() - t0;
    q.done("a");
    const t1 = Date.now();
    q.addRateLimited("a");
    assert.equal(await q.get(), "a");
    const d2 = Date.now() - t1;
    q.done("a");
    assert.equal(q.numRequeues("a"), 2);
    assert.ok(d1 >= 18 && d1 < 200, `first retry after ~20ms, got ${d1}`);
    assert.ok(d2 >= 38 && d2 < 250, `second retry after ~40ms, got ${d2}`);
    q.forget("a");
    assert.equal(q.numRequeues("a"), 0);
  });

  it("caps the backoff at maxDelay", async () => {
    const q = new WorkQueue({ name: "t-cap", baseDelayMs: 5, maxDelayMs: 30 });
    for (let i = 0; i < 20; i++) {
      const t = Date.now();
      q.addRateLimited("k");
      assert.equal(await q.get(), "k");
      q.done("k");
      assert.ok(Date.now() - t < 150, "delay stays under the cap");
    }
  });

  it("addAfter keeps the earliest time and delivers once", async () => {
    const q = new WorkQueue({ name: "t-after" });
    q.addAfter("a", 500);
    q.addAfter("a", 30);
    q.addAfter("a", 400);
    assert.equal(q.delayedCount, 1);
    const t = Date.now();
    assert.equal(await q.get(), "a");
    assert.ok(Date.now() - t < 300);
    q.done("a");
    await delay(50);
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
    await delay(100);
    await c.stop();
    assert.equal(overlaps, 0);
    assert.ok(runs >= 5 && runs < 250, `dedup collapsed adds: ${runs} runs`);
  });

  it("retries a failing key with backoff, then stops when it succeeds", async () => {
    let calls = 0;
    const c = new Controller({
      name: "t-retry",
      log: silentLogger(),
      baseDelayMs: 5,
      reconcile: async () => {
        calls++;
        if (calls < 4) throw new Error("boom");
        return undefined;
      },
    });
    c.start();
    c.queue.add("a");
    await delay(200);
    await c.stop();
    assert.equal(calls, 4);
    assert.equal(c.queue.numRequeues("a"), 0, "success forgets the failures");
  });

  it("requeues after the delay the reconcile asked for", async () => {
    const times: number[] = [];
    const c = new Controller({
      name: "t-requeue",
      log: silentLogger(),
      requeueJitter: 0,
      reconcile: async () => {
        times.push(Date.now());
        return times.length < 3 ? { requeueAfterMs: 40 } : undefined;
      },
    });
    c.start();
    c.queue.add("a");
    await delay(300);
    await c.stop();
    assert.equal(times.length, 3);
    assert.ok(times[1]! - times[0]! >= 38);
    assert.ok(times[2]! - times[1]! >= 38);
  });

  it("stop waits for the reconcile in flight", async () => {
    let finished = false;
    const c = new Controller({
      name: "t-drain",
      log: silentLogger(),
      reconcile: async () => {
        await delay(80);
        finished = true;
        return undefined;
      },
    });
    c.start();
    c.queue.add("a");
    await delay(10);
    await c.stop();
    assert.equal(finished, true);
  });
});
