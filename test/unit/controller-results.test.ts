import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import {
  Controller,
  combineResults,
  deferUntil,
  done,
  FAILURE_BASE_DELAY_MS,
  FAILURE_MAX_DELAY_MS,
  type ReconcileResult,
  requeueAfter,
  retry,
  terminal,
} from "../../src/runtime/controller.js";
import { silentLogger } from "../../src/runtime/log.js";
import {
  reconcileDeferred,
  reconcileErrors,
  reconcileTerminalErrors,
  reconcileTotal,
} from "../../src/runtime/metrics.js";
import { WorkQueue } from "../../src/runtime/workqueue.js";

async function counter(
  metric: typeof reconcileErrors | typeof reconcileTotal | typeof reconcileDeferred,
  labels: Record<string, string>,
): Promise<number> {
  const values = (await metric.get()).values;
  const v = values.find((x) =>
    Object.entries(labels).every(([k, want]) => (x.labels as Record<string, unknown>)[k] === want),
  );
  return v?.value ?? 0;
}

/** Runs a controller over key "a" until `until` says stop; returns when each pass started. */
async function drive(
  name: string,
  results: ReconcileResult[],
  opts: { failureBaseDelayMs?: number; failureMaxDelayMs?: number } = {},
): Promise<{ starts: number[]; controller: Controller }> {
  const starts: number[] = [];
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const c = new Controller({
    name,
    log: silentLogger(),
    requeueJitter: 0,
    queueRateLimit: { qps: 1000, burst: 1000 },
    ...opts,
    reconcile: async () => {
      starts.push(performance.now());
      const r = results[starts.length - 1];
      if (starts.length === results.length) finish();
      return r;
    },
  });
  c.start();
  c.queue.add("a");
  await finished;
  while (c.queue.processingCount > 0) await delay(2);
  return { starts, controller: c };
}

describe("reconcile results", () => {
  it("a reported failure backs off doubling per failure, counts as an error, and success resets it", async () => {
    const name = "t-retry-backoff";
    const { starts, controller } = await drive(
      name,
      [retry("Broken"), retry("Broken"), retry("Broken"), requeueAfter(1), retry("Broken"), done()],
      { failureBaseDelayMs: 30, failureMaxDelayMs: 10_000 },
    );
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    // 30, 60, 120 ms after the three failures; after the success the next failure starts at 30 again.
    assert.ok(gaps[0]! >= 28, `first retry after ${gaps[0]} ms`);
    assert.ok(gaps[1]! >= 58, `second retry after ${gaps[1]} ms`);
    assert.ok(gaps[2]! >= 118, `third retry after ${gaps[2]} ms`);
    assert.ok(gaps[4]! >= 28, `retry after a success after ${gaps[4]} ms`);
    assert.equal(controller.queue.numRequeues("a"), 0, "the final success forgets the failures");
    assert.equal(controller.queue.delayedCount, 0, "nothing is scheduled after done()");
    await controller.stop();
    assert.equal(await counter(reconcileErrors, { controller: name }), 4);
    assert.equal(await counter(reconcileTotal, { controller: name, result: "error" }), 4);
    assert.equal(await counter(reconcileTotal, { controller: name, result: "requeue_after" }), 1);
    assert.equal(await counter(reconcileTotal, { controller: name, result: "success" }), 1);
  });

  it("each pass reads its key's failures in a row on the context: failures count, a success resets", async () => {
    const name = "t-retry-failures";
    const seen: (number | undefined)[] = [];
    const plan: (ReconcileResult | "throw")[] = [
      retry("Broken"),
      "throw",
      retry("Broken"),
      requeueAfter(1),
      retry("Broken"),
      done(),
    ];
    let finish!: () => void;
    const finished = new Promise<void>((r) => {
      finish = r;
    });
    const c = new Controller({
      name,
      log: silentLogger(),
      requeueJitter: 0,
      baseDelayMs: 1,
      failureBaseDelayMs: 1,
      failureMaxDelayMs: 5,
      queueRateLimit: { qps: 1000, burst: 1000 },
      reconcile: async (_key, ctx) => {
        seen.push(ctx.failures);
        const r = plan[seen.length - 1];
        if (seen.length === plan.length) finish();
        if (r === "throw") throw new Error("boom");
        return r;
      },
    });
    c.start();
    c.queue.add("a");
    await finished;
    while (c.queue.processingCount > 0) await delay(2);
    await c.stop();
    // A thrown error and a retry result both count; the requeue-after pass was a success.
    assert.deepEqual(seen, [0, 1, 2, 3, 0, 1]);
    assert.equal(await counter(reconcileErrors, { controller: name }), 4);
    assert.equal(await counter(reconcileTotal, { controller: name, result: "success" }), 1);
  });

  it("the failure schedule is 5 s doubling to the 5-minute cap by default", () => {
    const q = new WorkQueue({ name: "t-retry-schedule", rateLimit: { qps: 1000, burst: 1000 } });
    const schedule = { baseDelayMs: FAILURE_BASE_DELAY_MS, maxDelayMs: FAILURE_MAX_DELAY_MS };
    const delays = Array.from({ length: 9 }, () => q.whenRateLimited("k", schedule));
    assert.deepEqual(delays, [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    q.forget("k");
    assert.equal(q.whenRateLimited("k", schedule), 5_000, "forget starts again at the base");
    // A thrown error keeps the queue's own (millisecond) schedule while sharing the failure count.
    assert.equal(q.whenRateLimited("k"), 10, "the second failure of the key, on the 5 ms base");
  });

  it("a terminal failure is counted and not retried until the object changes", async () => {
    const name = "t-terminal";
    const { starts, controller } = await drive(name, [terminal("InvalidSpec")]);
    await delay(50);
    assert.equal(starts.length, 1);
    assert.equal(controller.queue.delayedCount, 0, "no retry is scheduled");
    assert.equal(await counter(reconcileTerminalErrors, { controller: name }), 1);
    assert.equal(await counter(reconcileErrors, { controller: name }), 1);
    await controller.stop();
  });

  it("combines two halves of a pass: a failure wins, else the sooner requeue", () => {
    assert.deepEqual(combineResults(requeueAfter(10), retry("X")), retry("X"));
    assert.deepEqual(combineResults(terminal("T"), retry("X")), retry("X"));
    assert.deepEqual(combineResults(terminal("T"), requeueAfter(5)), terminal("T"));
    assert.deepEqual(combineResults(requeueAfter(10), requeueAfter(5)), requeueAfter(5));
    assert.deepEqual(combineResults(done(), requeueAfter(5)), requeueAfter(5));
    assert.equal(combineResults(done(), done()), undefined);
    const deferred = deferUntil(Promise.resolve(), 100);
    assert.equal(
      combineResults(requeueAfter(5), deferred),
      deferred,
      "a deferral runs both halves again soon",
    );
    assert.equal(combineResults(deferred, done()), deferred);
    assert.deepEqual(combineResults(deferred, retry("X")), retry("X"), "a failure still wins");
  });

  it("a deferred pass runs again once its promise settles, holding no worker, counting no failure", async () => {
    const name = "t-defer-promise";
    // Settles 50 ms after the deferring pass: the next pass follows it, long before the bound.
    const source = delay(50);
    const { starts, controller } = await drive(name, [retry("Broken"), deferUntil(source, 60_000), done()], {
      failureBaseDelayMs: 1,
    });
    assert.equal(starts.length, 3);
    assert.ok(starts[2]! - starts[1]! < 30_000, `ran again ${starts[2]! - starts[1]!} ms after deferring`);
    // The deferral did not clear the failure before it, nor count as one.
    assert.equal(await counter(reconcileErrors, { controller: name }), 1);
    assert.equal(await counter(reconcileDeferred, { controller: name }), 1);
    assert.equal(await counter(reconcileTotal, { controller: name, result: "requeue" }), 1);
    await controller.stop();
  });

  it("a deferred pass waits for its promise, and runs at its bound when the promise never settles", async () => {
    let release!: () => void;
    const source = new Promise<void>((r) => {
      release = r;
    });
    const passes: number[] = [];
    const c = new Controller({
      name: "t-defer-wait",
      log: silentLogger(),
      requeueJitter: 0,
      reconcile: async (key) => {
        passes.push(performance.now());
        if (key === "a" && passes.length === 1) return deferUntil(source, 60_000);
        if (key === "b") return deferUntil(new Promise(() => {}), 40);
        return done();
      },
    });
    c.start();
    c.queue.add("a");
    while (passes.length < 1 || c.queue.processingCount > 0) await delay(2);
    await delay(30);
    assert.equal(passes.length, 1, "nothing runs the key while its promise is pending");
    assert.equal(c.queue.processingCount, 0, "no worker is held");
    release();
    while (passes.length < 2) await delay(2);
    const t0 = performance.now();
    c.queue.add("b");
    while (passes.length < 4) await delay(2);
    assert.ok(passes[3]! - t0 >= 38, `the bound ran b again after ${passes[3]! - t0} ms`);
    await c.stop();
  });
});
