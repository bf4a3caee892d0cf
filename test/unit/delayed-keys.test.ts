import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DelayedKeys } from "../../src/runtime/delayed-keys.js";

/** A clock the test moves by hand; timers still run on the real event loop. */
function manualClock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("delayed keys behind one timer", () => {
  it("keeps the earliest time per key and fires every due key once", async () => {
    const clock = manualClock();
    const fired: string[] = [];
    let wake: () => void = () => {};
    const dk = new DelayedKeys((k) => {
      fired.push(k);
      if (fired.length === 3) wake();
    }, clock.now);
    try {
      dk.schedule("c", 300);
      dk.schedule("a", 100);
      dk.schedule("b", 200);
      dk.schedule("a", 250); // later: ignored
      dk.schedule("c", 50); // earlier: wins
      assert.equal(dk.size, 3);
      assert.equal(dk.dueAt("c"), 1_050);
      assert.equal(dk.dueAt("a"), 1_100);
      assert.equal(dk.dueAt("b"), 1_200);
      const done = new Promise<void>((r) => {
        wake = r;
      });
      clock.advance(150); // c and a are due, b is not
      dk.schedule("d", 0); // due now
      clock.advance(0);
      await done;
      assert.deepEqual(fired, ["c", "a", "d"]);
      assert.equal(dk.size, 1);
      assert.equal(dk.dueAt("b"), 1_200);
    } finally {
      dk.clear();
    }
  });

  it("the earliest is delivered first when times differ", async () => {
    const fired: string[] = [];
    const all = new Promise<void>((resolve) => {
      const dk = new DelayedKeys((k) => {
        fired.push(k);
        if (fired.length === 3) resolve();
      });
      dk.schedule("third", 30);
      dk.schedule("first", 1);
      dk.schedule("second", 15);
    });
    await all;
    assert.deepEqual(fired, ["first", "second", "third"]);
  });

  it("holds a thousand keys with one timer, and clear leaves none", () => {
    const before = timeouts();
    const dk = new DelayedKeys(() => assert.fail("nothing is due"));
    for (let i = 0; i < 1000; i++) dk.schedule(`k${i}`, 60_000 + i * 7);
    assert.equal(dk.size, 1000);
    assert.equal(timeouts() - before, 1);
    dk.clear();
    assert.equal(timeouts() - before, 0);
  });

  it("a wait longer than node's timer limit is not cut short", () => {
    const dk = new DelayedKeys(() => assert.fail("must not fire"));
    dk.schedule("far", 40 * 24 * 3600 * 1000);
    assert.equal(dk.size, 1);
    dk.clear();
  });
});
