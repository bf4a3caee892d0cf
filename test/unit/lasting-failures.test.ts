import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LastingFailures } from "../../src/runtime/lasting-failures.js";

describe("lasting failures", () => {
  it("stays at debug through a short outage, warns once it lasts, then every repeat period", () => {
    let now = 0;
    const f = new LastingFailures(60_000, 300_000, () => now);
    const levels: string[] = [];
    for (let t = 0; t <= 400_000; t += 20_000) {
      now = t;
      levels.push(f.failed("ns/a autopilot"));
    }
    const warnedAt = levels.flatMap((l, i) => (l === "warn" ? [i * 20_000] : []));
    assert.deepEqual(warnedAt, [60_000, 360_000]);
  });

  it("a success starts a new grace period; each thing has its own", () => {
    let now = 0;
    const f = new LastingFailures(60_000, 300_000, () => now);
    f.failed("a");
    now = 50_000;
    f.succeeded("a");
    assert.equal(f.failed("a"), "debug");
    now = 100_000;
    assert.equal(f.failed("a"), "debug", "50 s since the failure after the success");
    assert.equal(f.failed("b"), "debug");
    now = 110_000;
    assert.equal(f.failed("a"), "warn");
    assert.equal(f.failed("b"), "debug");
  });
});
