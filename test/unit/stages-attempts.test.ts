import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCondition } from "../../src/runtime/conditions.js";
import { fail, proceed, runStages, Stages, wait } from "../../src/runtime/stages.js";
import { type AttemptRecord, countAttempts, withGiveUp } from "../../src/runtime/stages-attempts.js";
import { applySettled, settleStages } from "../../src/runtime/stages-settle.js";
import { testReason } from "../support/reasons.js";

type R = ReturnType<typeof testReason>;
const Ok = testReason("Reconciled");
const Broken = testReason("Broken");
const now = new Date("2026-01-01T00:00:00Z");

/** A kind's pass as it would run it: the record read from status, the record written back. */
async function pass(
  stages: Stages<object, object, R, undefined, string>,
  status: { attempts?: AttemptRecord },
  generation = 1,
) {
  const raw = await runStages(stages, {});
  const attempts = countAttempts(status.attempts, raw, generation);
  const outcome = withGiveUp(raw, attempts);
  const settled = settleStages(outcome, {
    readyReason: Ok,
    readyMessage: "fine",
    doneAfterMs: 60_000,
    waitAfterMs: 5_000,
  });
  // Persisted as status is: through JSON, so nothing but the record crosses passes.
  const next = JSON.parse(JSON.stringify(attempts ? { attempts } : {})) as { attempts?: AttemptRecord };
  const conditions = applySettled(undefined, settled, now);
  return { result: settled.result, status: next, conditions };
}

describe("pass kernel: give up after N persisted attempts", () => {
  let broken = true;
  const flaky = Stages.over<object, R>()
    .stage("prepare", () => proceed())
    .stage("upload", () =>
      broken ? fail(Broken, new Error("store refused"), { giveUpAfter: 3 }) : proceed(),
    );

  it("retries with the runtime's backoff twice, then the third failure is final: terminal and Stalled", async () => {
    broken = true;
    let status: { attempts?: AttemptRecord } = {};
    const first = await pass(flaky, status);
    assert.deepEqual(first.result, { retryReason: "Broken" });
    assert.deepEqual(first.status.attempts, {
      stage: "upload",
      reason: "Broken",
      attempts: 1,
      generation: 1,
    });
    assert.equal(findCondition(first.conditions, "Reconciling")?.status, "True");
    status = first.status;
    const second = await pass(flaky, status);
    assert.deepEqual(second.result, { retryReason: "Broken" });
    status = second.status;
    const third = await pass(flaky, status);
    assert.deepEqual(third.result, { terminalReason: "Broken" });
    assert.equal(third.status.attempts?.attempts, 3);
    const stalled = findCondition(third.conditions, "Stalled");
    assert.equal(stalled?.status, "True");
    assert.equal(stalled?.message, "gave up after 3 failed attempts: store refused");
    assert.equal(findCondition(third.conditions, "Reconciling"), undefined);
    // Woken again without a change (its own status write): still given up, not retried.
    const fourth = await pass(flaky, third.status);
    assert.deepEqual(fourth.result, { terminalReason: "Broken" });
  });

  it("a changed spec counts afresh; a pass that gets through clears the count", async () => {
    broken = true;
    const given = { attempts: { stage: "upload", reason: "Broken", attempts: 3, generation: 1 } };
    const changed = await pass(flaky, given, 2);
    assert.deepEqual(changed.result, { retryReason: "Broken" });
    assert.equal(changed.status.attempts?.attempts, 1);
    broken = false;
    const healed = await pass(flaky, changed.status, 2);
    assert.deepEqual(healed.result, { requeueAfterMs: 60_000 });
    assert.deepEqual(healed.status, {});
  });

  it("a failure at another stage, or a wait between, starts the count again", () => {
    const prev: AttemptRecord = { stage: "upload", reason: "Broken", attempts: 2, generation: 1 };
    const elsewhere = { ...fail(Broken, "x", { giveUpAfter: 3 }), stage: "prepare" };
    assert.equal(countAttempts(prev, elsewhere, 1)?.attempts, 1);
    assert.equal(countAttempts(prev, { ...wait(Broken, "a Job runs"), stage: "upload" }, 1), undefined);
  });

  it("a failure without giveUpAfter is retried however many times it failed", () => {
    const out = { ...fail(Broken, "x"), stage: "upload" };
    const many: AttemptRecord = { stage: "upload", reason: "Broken", attempts: 50 };
    assert.equal(withGiveUp(out, countAttempts(many, out)), out);
  });

  it("refuses a giveUpAfter that is not a whole number of at least 1, naming it", () => {
    assert.throws(() => fail(Broken, "x", { giveUpAfter: 0 }), /giveUpAfter must be .* not 0/);
    assert.throws(() => fail(Broken, "x", { giveUpAfter: 1.5 }), /giveUpAfter/);
  });
});
