import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import { livenessProblems, type WatchLoop, type WorkLoop } from "../../src/runtime/health.js";
import { WorkQueue } from "../../src/runtime/workqueue.js";

// Times are passed in explicitly: nothing here depends on how fast the machine is.

describe("liveness rules", () => {
  const watch = (stalled: string[]): WatchLoop => ({ type: CONFIGMAP, stalledScopes: () => stalled });
  const work = (name: string, waiting: number, stalledMs: number): WorkLoop => ({
    name,
    queue: { length: waiting },
    stalledForMs: () => stalledMs,
  });

  it("names each stuck informer scope and each stuck queue, and nothing when all move", () => {
    assert.deepEqual(livenessProblems([watch([])], [work("a", 3, 10)], 60_000), []);
    assert.deepEqual(livenessProblems([watch(["ns1", "*"])], [work("a", 3, 60_001)], 60_000), [
      "informer configmaps (namespace ns1): no list or watch progress for over 60s",
      "informer configmaps (all namespaces): no list or watch progress for over 60s",
      "controller a: 3 keys waiting, no worker progress for over 60s",
    ]);
  });
});

describe("work queue progress clock", () => {
  it("is not stalled while empty, however long it was idle", () => {
    const q = new WorkQueue({ name: "live-empty" });
    assert.equal(q.stalledForMs(performance.now() + 3_600_000), 0);
  });

  it("counts from when keys started waiting, and restarts whenever a worker takes or finishes one", async () => {
    const q = new WorkQueue({ name: "live-wait" });
    // Read the queue's progress time back through a fixed point far in the future.
    const far = performance.now() + 1_000_000;
    const progressAt = () => far - q.stalledForMs(far);
    const beforeAdd = performance.now();
    q.add("a");
    q.add("b");
    q.add("c");
    const waiting = progressAt();
    assert.ok(waiting >= beforeAdd && waiting <= performance.now(), "waiting since the first add");
    const key = await q.get();
    const taken = progressAt();
    assert.ok(taken >= waiting, "a take is progress");
    q.done(key!);
    assert.ok(progressAt() >= taken, "a finished key is progress");
    await q.get();
    await q.get();
    assert.equal(q.stalledForMs(far), 0, "nothing waits: not stalled, whatever the workers do");
    q.shutDown();
  });
});
