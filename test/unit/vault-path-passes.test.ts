import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PathPasses } from "../../src/targets/vault/path-passes.js";

describe("passes under way on reference sources", () => {
  it("settles when every pass on the path has ended, not before", async () => {
    const passes = new PathPasses();
    const endA = passes.begin("secret/a");
    const endB = passes.begin("secret/a");
    let settled = false;
    const waiting = passes.settled("secret/a", 60_000).then(() => {
      settled = true;
    });
    endA();
    await Promise.resolve();
    assert.equal(settled, false, "one pass is still under way");
    assert.equal(passes.busy("secret/a"), true);
    endB();
    await waiting;
    assert.equal(passes.busy("secret/a"), false);
  });

  it("does not wait on a path with no pass, past its bound, or once aborted", async () => {
    const passes = new PathPasses();
    await passes.settled("secret/none", 60_000);
    const end = passes.begin("secret/slow");
    const t0 = performance.now();
    await passes.settled("secret/slow", 20);
    assert.ok(performance.now() - t0 < 30_000, "the bound ends the wait");
    const abort = new AbortController();
    const waiting = passes.settled("secret/slow", 60_000, abort.signal);
    abort.abort();
    await waiting;
    assert.equal(passes.busy("secret/slow"), true, "the pass itself goes on");
    end();
    assert.equal(passes.busy("secret/slow"), false);
  });
});
