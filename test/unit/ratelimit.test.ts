import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRetryAfter, TokenBucket } from "../../src/runtime/ratelimit.js";
import { WorkQueue } from "../../src/runtime/workqueue.js";

/** A clock the test moves by hand: no wall-clock time decides anything here. */
function manualClock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("TokenBucket", () => {
  it("lets a burst through at once, then spaces reservations at the rate", () => {
    const c = manualClock();
    const b = new TokenBucket({ qps: 10, burst: 3 }, c.now);
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0]);
    // Further callers queue in order: 100 ms, 200 ms, 300 ms from now.
    assert.deepEqual(
      [b.reserve(), b.reserve(), b.reserve()].map((d) => Math.round(d)),
      [100, 200, 300],
    );
    c.advance(300);
    assert.equal(Math.round(b.available), 0, "the waiting callers used what refilled");
    c.advance(10_000);
    assert.equal(b.available, 3, "a quiet bucket fills only up to its burst");
  });

  it("refuses unusable settings, naming the field", () => {
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), /qps: must be a number above 0/);
    assert.throws(() => new TokenBucket({ qps: 5, burst: 0.5 }), /burst: must be a whole number/);
    assert.throws(() => new TokenBucket({ qps: Number.NaN, burst: 3 }), /qps/);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates; anything else means no retry", () => {
    assert.equal(parseRetryAfter("3"), 3000);
    assert.equal(parseRetryAfter(["2"]), 2000);
    assert.equal(parseRetryAfter("Thu, 01 Jan 1970 00:00:05 GMT", 1000), 4000);
    assert.equal(parseRetryAfter(undefined), undefined);
    assert.equal(parseRetryAfter(""), undefined);
    assert.equal(parseRetryAfter("soon"), undefined);
  });
});

describe("WorkQueue overall retry limit", () => {
  it("applies a token bucket over all keys on top of per-key backoff", () => {
    const c = manualClock();
    const q = new WorkQueue({
      name: "t-overall",
      baseDelayMs: 5,
      rateLimit: { qps: 10, burst: 100 },
      clock: c.now,
    });
    // 150 different keys fail once each: per-key backoff alone would retry all of them after 5 ms.
    const delays = Array.from({ length: 150 }, (_, i) => q.whenRateLimited(`k${i}`));
    assert.ok(
      delays.slice(0, 100).every((d) => d === 5),
      "the first 100 retries fit in the burst",
    );
    assert.deepEqual(
      delays.slice(100, 103).map((d) => Math.round(d)),
      [100, 200, 300],
      "the rest go at 10 per second",
    );
    assert.equal(Math.round(delays[149]!), 5000);
    q.shutDown();
  });

  it("keeps the per-key backoff when it is the longer wait", () => {
    const c = manualClock();
    const q = new WorkQueue({ name: "t-overall-key", baseDelayMs: 5, maxDelayMs: 1000, clock: c.now });
    const d = [1, 2, 3, 4, 5, 6, 7, 8].map(() => q.whenRateLimited("same"));
    assert.deepEqual(d, [5, 10, 20, 40, 80, 160, 320, 640]);
    q.shutDown();
  });
});
