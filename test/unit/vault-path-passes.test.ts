import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PathPasses } from "../../src/targets/vault/path-passes.js";

describe("passes under way on reference sources", () => {
  it("defers a copier until every pass on its busy sources has ended, not before", async () => {
    const passes = new PathPasses(60_000);
    const endA = passes.begin("secret/a");
    const endB = passes.begin("secret/a");
    const endC = passes.begin("secret/c");
    const deferral = passes.deferral("ns/copier", ["secret/a", "secret/c", "secret/idle"]);
    assert.ok(deferral, "busy sources defer the copier");
    assert.equal(deferral.boundMs, 60_000);
    let settled = false;
    const waiting = deferral.until.then(() => {
      settled = true;
    });
    endA();
    endC();
    await Promise.resolve();
    await Promise.resolve();
    assert.equal(settled, false, "one pass on secret/a is still under way");
    assert.equal(passes.busy("secret/a"), true);
    endB();
    await waiting;
    assert.equal(passes.busy("secret/a"), false);
    assert.equal(passes.deferral("ns/copier", ["secret/a", "secret/c"]), undefined, "nothing busy: read now");
  });

  it("bounds an object's deferrals in all, then lets it read sources that stay busy", () => {
    let now = 1_000;
    const passes = new PathPasses(5_000, () => now);
    const end = passes.begin("secret/hot");
    assert.equal(passes.deferral("ns/x", ["secret/hot"])?.boundMs, 5_000);
    now += 3_000;
    assert.equal(
      passes.deferral("ns/x", ["secret/hot"])?.boundMs,
      2_000,
      "the bound counts from the first deferral",
    );
    assert.equal(passes.deferral("ns/other", ["secret/hot"])?.boundMs, 5_000, "each object has its own");
    now += 2_000;
    assert.equal(passes.deferral("ns/x", ["secret/hot"]), undefined, "spent: it reads the source as it is");
    assert.equal(passes.deferral("ns/x", ["secret/hot"])?.boundMs, 5_000, "a later pass may defer again");
    passes.forget("ns/x");
    now += 1_000;
    assert.equal(passes.deferral("ns/x", ["secret/hot"])?.boundMs, 5_000, "forgotten with its object");
    end();
    assert.equal(passes.deferral("ns/other", ["secret/hot"]), undefined);
  });

  it("never defers on paths no pass is writing", () => {
    const passes = new PathPasses();
    assert.equal(passes.deferral("ns/x", ["secret/none"]), undefined);
    assert.equal(passes.busy("secret/none"), false);
  });
});
