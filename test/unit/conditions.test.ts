import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { exponentialDelay, jitter } from "../../src/runtime/backoff.js";
import { findCondition, isTrue, sameConditions, setCondition } from "../../src/runtime/conditions.js";
import { testReason } from "../support/reasons.js";

describe("conditions", () => {
  const t1 = new Date("2026-01-01T00:00:00.123Z");
  const t2 = new Date("2026-01-01T01:00:00Z");

  it("adds a condition with lastTransitionTime in seconds precision", () => {
    const l = setCondition(
      [],
      { type: "Ready", status: "True", reason: testReason("Reconciled"), message: "", observedGeneration: 1 },
      t1,
    );
    assert.equal(l.length, 1);
    assert.equal(l[0]!.lastTransitionTime, "2026-01-01T00:00:00Z");
    assert.ok(isTrue(l, "Ready"));
  });

  it("keeps lastTransitionTime when only reason, message or generation change", () => {
    let l = setCondition(
      [],
      { type: "Ready", status: "False", reason: testReason("A"), message: "a", observedGeneration: 1 },
      t1,
    );
    l = setCondition(
      l,
      { type: "Ready", status: "False", reason: testReason("B"), message: "b", observedGeneration: 2 },
      t2,
    );
    const c = findCondition(l, "Ready")!;
    assert.equal(c.lastTransitionTime, "2026-01-01T00:00:00Z");
    assert.equal(c.reason, "B");
    assert.equal(c.observedGeneration, 2);
  });

  it("moves lastTransitionTime when the status changes, and keeps other types", () => {
    let l = setCondition([], { type: "Ready", status: "False", reason: testReason("A"), message: "" }, t1);
    l = setCondition(l, { type: "Stalled", status: "False", reason: testReason("A"), message: "" }, t1);
    l = setCondition(l, { type: "Ready", status: "True", reason: testReason("A"), message: "" }, t2);
    assert.equal(findCondition(l, "Ready")!.lastTransitionTime, "2026-01-01T01:00:00Z");
    assert.equal(l.length, 2);
  });

  it("sameConditions ignores order only", () => {
    const a = setCondition(
      setCondition([], { type: "A", status: "True", reason: testReason("r"), message: "" }, t1),
      { type: "B", status: "False", reason: testReason("r"), message: "" },
      t1,
    );
    const b = [a[1]!, a[0]!];
    assert.ok(sameConditions(a, b));
    assert.ok(
      !sameConditions(
        a,
        setCondition(a, { type: "A", status: "True", reason: testReason("other"), message: "" }, t1),
      ),
    );
  });
});

describe("backoff", () => {
  it("doubles from the base and caps at the maximum", () => {
    assert.equal(exponentialDelay(0, 5, 1000), 0);
    assert.equal(exponentialDelay(1, 5, 1000), 5);
    assert.equal(exponentialDelay(2, 5, 1000), 10);
    assert.equal(exponentialDelay(8, 5, 1000), 640);
    assert.equal(exponentialDelay(9, 5, 1000), 1000);
    assert.equal(exponentialDelay(500, 5, 1_000_000), 1_000_000);
  });
  it("jitter only lengthens, by at most the factor", () => {
    assert.equal(
      jitter(1000, 0.1, () => 0),
      1000,
    );
    assert.equal(
      jitter(1000, 0.1, () => 0.999),
      1100,
    );
  });
});
