import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { findCondition } from "../../src/runtime/conditions.js";
import { Controller, FAILURE_BASE_DELAY_MS } from "../../src/runtime/controller.js";
import { silentLogger } from "../../src/runtime/log.js";
import { reconcileErrors, reconcileTerminalErrors, type reconcileTotal } from "../../src/runtime/metrics.js";
import {
  AT_ONCE_MS,
  fail,
  invalid,
  proceed,
  runStages,
  Stages,
  type StagesOutcome,
  wait,
} from "../../src/runtime/stages.js";
import { applySettled, settleStages, stageResult } from "../../src/runtime/stages-settle.js";
import { testReason } from "../support/reasons.js";

type R = ReturnType<typeof testReason>;
const Ok = testReason("Reconciled");
const Waiting = testReason("Waiting");
const Broken = testReason("Broken");
const Bad = testReason("BadSpec");
const now = new Date("2026-01-01T00:00:00Z");

async function counter(
  metric: typeof reconcileErrors | typeof reconcileTotal,
  labels: Record<string, string>,
): Promise<number> {
  const v = (await metric.get()).values.find((x) =>
    Object.entries(labels).every(([k, want]) => (x.labels as Record<string, unknown>)[k] === want),
  );
  return v?.value ?? 0;
}

const settle = (o: StagesOutcome<unknown, R, undefined>) =>
  settleStages(o, {
    readyReason: Ok,
    readyMessage: "fine",
    generation: 3,
    doneAfterMs: 60_000,
    waitAfterMs: 7_000,
  });

describe("pass kernel: runStages", () => {
  it("runs stages in order, each reading what the earlier ones added", async () => {
    const seen: string[] = [];
    const pass = Stages.over<{ input: number }, R>()
      .stage("double", (c) => proceed({ doubled: c.input * 2 }))
      .stage("describe", async (c) => proceed({ text: `${c.input}→${c.doubled}` }));
    const out = await runStages(pass, { input: 4 }, { at: (s) => seen.push(s) });
    assert.deepEqual(seen, ["double", "describe"]);
    assert.equal(out.kind, "done");
    if (out.kind === "done") assert.equal(out.context.text, "4→8");
  });

  it("stops at the first stage that does not continue, naming it; later stages do not run", async () => {
    let ran = false;
    const pass = Stages.over<object, R>()
      .stage("first", () => proceed())
      .stage("blocked", () => wait(Waiting, "a Job runs", { afterMs: 1_500 }))
      .stage("after", () => {
        ran = true;
        return proceed();
      });
    const out = await runStages(pass, {});
    assert.equal(ran, false);
    assert.equal(out.kind, "wait");
    if (out.kind === "wait") {
      assert.equal(out.stage, "blocked");
      assert.equal(out.afterMs, 1_500);
    }
  });

  it("refuses a stage name used twice", () => {
    const pass = Stages.over<object, R>().stage("a", () => proceed());
    assert.throws(() => pass.stage("a" as never, () => proceed()), /stage name a is used twice/);
    assert.deepEqual(pass.names, ["a"]);
  });

  it("a thrown error goes on to the runtime unless onThrow makes it a stop of the stage that threw", async () => {
    const pass = Stages.over<object, R>().stage("boom", () => {
      throw new Error("kaput");
    });
    await assert.rejects(runStages(pass, {}), /kaput/);
    const out = await runStages(pass, {}, { onThrow: (e) => fail(Broken, e) });
    assert.equal(out.kind, "fail");
    if (out.kind === "fail") {
      assert.equal(out.stage, "boom");
      assert.equal(out.message, "kaput");
    }
    const aborted = AbortSignal.abort();
    await assert.rejects(runStages(pass, {}, { signal: aborted, onThrow: (e) => fail(Broken, e) }), /kaput/);
  });

  it("does not compile a stage that reads an output no earlier stage produced", () => {
    const pass = Stages.over<{ input: number }, R>()
      // @ts-expect-error: `doubled` is produced by the stage after this one
      .stage("early", (c) => proceed({ text: String(c.doubled) }))
      .stage("double", (c) => proceed({ doubled: c.input * 2 }));
    assert.deepEqual(pass.names, ["early", "double"]);
    // @ts-expect-error: a name already used does not compile either (and is refused when run)
    assert.throws(() => pass.stage("double", () => proceed()), /used twice/);
  });
});

describe("pass kernel: outcome → conditions and result", () => {
  const cond = (o: StagesOutcome<unknown, R, undefined>, type: string) =>
    findCondition(applySettled(undefined, settle(o), now), type);

  it("done: Ready True, no Reconciling nor Stalled, requeued after the resync", () => {
    const prev = applySettled(
      undefined,
      settle({ kind: "invalid", stage: "s", reason: Bad, message: "x" }),
      now,
    );
    const s = settle({ kind: "done", context: {} });
    const list = applySettled(prev, s, now);
    assert.deepEqual(
      list.map((c) => [c.type, c.status, c.reason, c.message, c.observedGeneration]),
      [["Ready", "True", "Reconciled", "fine", 3]],
    );
    assert.deepEqual(s.result, { requeueAfterMs: 60_000 });
  });

  it("wait: Ready False and Reconciling True with the reason; requeued after its delay or the default", () => {
    const w = { kind: "wait", stage: "s", reason: Waiting, message: "hook runs" } as const;
    assert.equal(cond(w, "Ready")?.status, "False");
    assert.equal(cond(w, "Reconciling")?.reason, "Waiting");
    assert.equal(cond(w, "Stalled"), undefined);
    assert.deepEqual(settle(w).result, { requeueAfterMs: 7_000 });
    assert.deepEqual(settle({ ...w, afterMs: 250 }).result, { requeueAfterMs: 250 });
  });

  it("wait on something outside: Stalled instead of Reconciling, or neither when quiet", () => {
    const w = { kind: "wait", stage: "s", reason: Waiting, message: "no mount" } as const;
    assert.equal(cond({ ...w, by: "stalled" }, "Stalled")?.status, "True");
    assert.equal(cond({ ...w, by: "stalled" }, "Reconciling"), undefined);
    assert.equal(cond({ ...w, by: "quiet" }, "Stalled"), undefined);
    assert.equal(cond({ ...w, by: "quiet" }, "Reconciling"), undefined);
    assert.equal(cond({ ...w, by: "quiet" }, "Ready")?.reason, "Waiting");
  });

  it("fail: Ready False, Reconciling True, a retry result with the reason", () => {
    const f = fail(Broken, new Error("backend down"));
    const s = settle({ ...f, stage: "s" });
    assert.equal(cond({ ...f, stage: "s" }, "Reconciling")?.message, "backend down");
    assert.equal(cond({ ...f, stage: "s" }, "Stalled"), undefined);
    assert.deepEqual(s.result, { retryReason: "Broken" });
  });

  it("invalid: Ready False, Stalled True, a terminal result (no retry until the object changes)", () => {
    const i = { ...invalid(Bad, "spec.path is missing"), stage: "validate" };
    assert.equal(cond(i, "Stalled")?.reason, "BadSpec");
    assert.equal(cond(i, "Reconciling"), undefined);
    assert.deepEqual(settle(i).result, { terminalReason: "BadSpec" });
  });

  it("the result alone, for a kind whose conditions are its own: the same mapping", () => {
    const next = { waitAfterMs: 7_000 };
    assert.equal(
      stageResult({ kind: "done", context: {} }, next),
      undefined,
      "no resync: nothing until a change",
    );
    assert.deepEqual(stageResult({ kind: "done", context: {} }, { ...next, doneAfterMs: 5 }), {
      requeueAfterMs: 5,
    });
    assert.deepEqual(stageResult({ kind: "wait", stage: "s", reason: Waiting, message: "" }, next), {
      requeueAfterMs: 7_000,
    });
    assert.deepEqual(stageResult({ ...fail(Broken, "x"), stage: "s" }, next), { retryReason: "Broken" });
    assert.deepEqual(stageResult({ ...invalid(Bad, "x"), stage: "s" }, next), { terminalReason: "BadSpec" });
  });

  it("a pass that is not a list of stages hands its own stop: a wait at once, a named wait, a failure", () => {
    const next = { waitAfterMs: 7_000 };
    assert.deepEqual(stageResult({ kind: "done" }, next), undefined);
    // A requeue of 0 would be no requeue at all: at once must still come back.
    assert.deepEqual(stageResult(wait(Waiting, "", { afterMs: AT_ONCE_MS }), next), { requeueAfterMs: 1 });
    assert.deepEqual(stageResult(wait(Waiting, "", { afterMs: 2_000 }), next), { requeueAfterMs: 2_000 });
    assert.deepEqual(stageResult(wait(Waiting, ""), next), { requeueAfterMs: 7_000 });
    assert.deepEqual(stageResult(fail(Broken, new Error("refused")), next), { retryReason: "Broken" });
  });

  it("a failed pass backs off in the runtime and counts as an error; an invalid one is not retried", async () => {
    const name = "t-stages-fail";
    const pass = Stages.over<object, R>().stage("apply", () => fail(Broken, new Error("refused")));
    const starts: number[] = [];
    const c = new Controller({
      name,
      log: silentLogger(),
      requeueJitter: 0,
      failureBaseDelayMs: 40,
      queueRateLimit: { qps: 1000, burst: 1000 },
      reconcile: async () => {
        starts.push(performance.now());
        return settle(await runStages(pass, {})).result;
      },
    });
    c.start();
    c.queue.add("a");
    const deadline = Date.now() + 20_000;
    while (starts.length < 3 && Date.now() < deadline) await delay(5);
    await c.stop();
    assert.ok(starts.length >= 3, `${starts.length} passes`);
    assert.ok(starts[1]! - starts[0]! >= 38, `first retry after ${starts[1]! - starts[0]!} ms`);
    assert.ok(starts[2]! - starts[1]! >= 78, `second retry after ${starts[2]! - starts[1]!} ms (doubled)`);
    assert.ok((await counter(reconcileErrors, { controller: name })) >= 3);
    assert.ok(FAILURE_BASE_DELAY_MS > 40, "the test's base delay is shorter than the runtime's default");

    const tname = "t-stages-invalid";
    const bad = Stages.over<object, R>().stage("validate", () => invalid(Bad, "spec.path is missing"));
    let passes = 0;
    const t = new Controller({
      name: tname,
      log: silentLogger(),
      reconcile: async () => {
        passes++;
        return settle(await runStages(bad, {})).result;
      },
    });
    t.start();
    t.queue.add("a");
    const until = Date.now() + 20_000;
    while ((await counter(reconcileTerminalErrors, { controller: tname })) < 1 && Date.now() < until)
      await delay(5);
    while (t.queue.processingCount > 0) await delay(2);
    assert.equal(t.queue.delayedCount, 0, "nothing is scheduled after an invalid pass");
    await t.stop();
    assert.equal(passes, 1);
    assert.equal(await counter(reconcileTerminalErrors, { controller: tname }), 1);
  });
});
