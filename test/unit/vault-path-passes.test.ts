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

  it("in a chain, a deferred object's own source path stays busy until its next pass, so its copier defers too", async () => {
    const passes = new PathPasses(60_000);
    // A is being written; B (copies A, copied by C) defers on it, its own pass then ending.
    const endA = passes.begin("secret/a", "ns/a");
    const endBFirst = passes.begin("secret/b", "ns/b");
    const b = passes.deferral("ns/b", ["secret/a"], "secret/b");
    assert.ok(b);
    endBFirst();
    assert.equal(passes.busy("secret/b"), true, "held for B while it is deferred");
    const c = passes.deferral("ns/c", ["secret/b"], "secret/c");
    assert.ok(c, "C defers on B's held path instead of reading it empty");
    let cResumed = false;
    const cWaiting = c.until.then(() => {
      cResumed = true;
    });
    endA();
    await b.until;
    await Promise.resolve();
    assert.equal(cResumed, false, "A written is not enough: B has not run again yet");
    // B's next pass begins (its own mark replaces the hold), reads A, writes B, ends.
    const endBSecond = passes.begin("secret/b", "ns/b");
    await cWaiting;
    assert.equal(passes.busy("secret/b"), true, "B's new pass is under way");
    assert.ok(passes.deferral("ns/c", ["secret/b"], "secret/c"), "C waits for that pass too");
    endBSecond();
    assert.equal(passes.busy("secret/b"), false);
    assert.equal(passes.busy("secret/c"), true, "C's own path held while C is deferred");
    passes.release("ns/c");
    assert.equal(passes.busy("secret/c"), false, "a pass of C that did not defer lets go");
    // forget lets go too (the object is gone).
    const endD = passes.begin("secret/d");
    assert.ok(passes.deferral("ns/e", ["secret/d"], "secret/e"));
    passes.forget("ns/e");
    assert.equal(passes.busy("secret/e"), false);
    endD();
  });

  it("never defers on paths no pass is writing", () => {
    const passes = new PathPasses();
    assert.equal(passes.deferral("ns/x", ["secret/none"]), undefined);
    assert.equal(passes.busy("secret/none"), false);
  });
});
