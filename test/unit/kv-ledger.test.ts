import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LoadLedger, type ReadBack, summarizeLoad } from "../support/kv-ledger.js";

// The arithmetic behind the upgrade proofs' numbers: a wrong window or a missed lost write would
// make every upgrade look better than it was.

const ok = (op: "write" | "read", startedAt: number, endedAt = startedAt + 5) => ({
  op,
  ok: true,
  startedAt,
  endedAt,
});
const bad = (op: "write" | "read", startedAt: number, endedAt = startedAt + 5, error = "ECONNREFUSED") => ({
  op,
  ok: false,
  startedAt,
  endedAt,
  error,
});

describe("kv-load ledger", () => {
  it("counts writes and reads, attempted and failed, apart", () => {
    const l = new LoadLedger(0);
    l.record(ok("write", 0));
    l.acknowledge(1, "v1");
    l.record(bad("write", 10));
    l.record(ok("read", 20));
    l.record({ op: "read", ok: false, startedAt: 30, endedAt: 31, mismatch: true });
    const r = l.report(100);
    assert.equal(r.writesAttempted, 2);
    assert.equal(r.writesAcknowledged, 1);
    assert.equal(r.writesFailed, 1);
    assert.equal(r.readsAttempted, 2);
    assert.equal(r.readsFailed, 1);
    assert.equal(r.readsMismatched, 1);
    assert.deepEqual(
      r.errors.map((e) => e.error).sort(),
      ["ECONNREFUSED", "read answered another value"].sort(),
    );
  });

  it("a read that succeeded after a stale answer is counted stale, not failed, and opens no outage", () => {
    const l = new LoadLedger(0);
    l.record({ op: "read", ok: true, stale: true, startedAt: 0, endedAt: 300 });
    l.record({ op: "read", ok: true, startedAt: 400, endedAt: 405 });
    const r = l.report(500);
    assert.equal(r.readsStale, 1);
    assert.equal(r.readsFailed, 0);
    assert.deepEqual(r.outages, []);
  });

  it("a run of failures is one outage, closed at the next success's start; separate runs add up", () => {
    const l = new LoadLedger(0);
    l.record(ok("write", 0));
    l.record(bad("write", 100, 110));
    l.record(bad("read", 120, 130));
    l.record(bad("write", 150, 400)); // a timeout
    l.record(ok("write", 450));
    l.record(bad("read", 1000, 1001));
    l.record(ok("read", 1050));
    const r = l.report(2000);
    assert.deepEqual(r.outages, [
      { from: 100, to: 450, failures: 3 },
      { from: 1000, to: 1050, failures: 1 },
    ]);
    assert.equal(r.failedTimeMs, 350 + 50);
    assert.equal(r.longestOutageMs, 350);
    assert.equal(r.firstFailureAt, 100);
    assert.equal(r.lastFailureAt, 1001);
    assert.equal(r.failureWindowMs, 901);
  });

  it("an outage still open at stop ends at its last failure's end", () => {
    const l = new LoadLedger(0);
    l.record(bad("write", 10, 20));
    l.record(bad("write", 30, 45));
    const r = l.report(100);
    assert.deepEqual(r.outages, [{ from: 10, to: 45, failures: 2 }]);
    assert.equal(r.failedTimeMs, 35);
  });

  it("no failures: every window is 0 and no failure time is set", () => {
    const l = new LoadLedger(0);
    l.record(ok("write", 0));
    const r = l.report(10);
    assert.equal(r.failureWindowMs, 0);
    assert.equal(r.failedTimeMs, 0);
    assert.equal(r.longestOutageMs, 0);
    assert.equal(r.firstFailureAt, undefined);
    assert.deepEqual(r.outages, []);
  });

  it("leader changes count moves between addresses; a gap without a leader is not a change", () => {
    const l = new LoadLedger(0);
    l.observeLeader("http://a", 0);
    l.observeLeader("http://a", 5);
    l.observeLeader("", 10);
    l.observeLeader("http://a", 20); // the same node came back: no change
    l.observeLeader("", 30);
    l.observeLeader("http://b", 40);
    l.observeLeader("http://c", 50);
    const r = l.report(60);
    assert.equal(r.leaderChanges, 2);
    assert.deepEqual(
      r.leaders.map((s) => s.address),
      ["http://a", "", "http://a", "", "http://b", "http://c"],
    );
  });

  it("the first sighting is not a change, even after an initial gap", () => {
    const l = new LoadLedger(0);
    l.observeLeader("", 0);
    l.observeLeader("http://a", 10);
    assert.equal(l.report(20).leaderChanges, 0);
  });

  it("lost writes are the acknowledged ones read back missing or changed; failed reads are unverified", () => {
    const l = new LoadLedger(0);
    for (let seq = 1; seq <= 5; seq++) l.acknowledge(seq, `v${seq}`);
    assert.equal(l.report(1).unverified, 5, "nothing read back yet");
    const results = new Map<number, ReadBack>([
      [1, "ok"],
      [2, "missing"],
      [3, "ok"],
      [4, "mismatch"],
      [5, "error"],
    ]);
    l.settle(results);
    const r = l.report(2);
    assert.equal(r.lostWrites, 2);
    assert.deepEqual(r.lostSequences, [2, 4]);
    assert.equal(r.unverified, 1);
    assert.match(summarizeLoad(r), /lost writes 2 \(1 unverified\)/);
  });

  it("a write acknowledged twice under one sequence is a bug in the caller, not a count", () => {
    const l = new LoadLedger(0);
    l.acknowledge(1, "a");
    assert.throws(() => l.acknowledge(1, "b"), /sequence 1 acknowledged twice/);
  });

  it("the newest acknowledged write is the one read back in the loop", () => {
    const l = new LoadLedger(0);
    assert.equal(l.latestAcknowledged(), undefined);
    l.acknowledge(3, "c");
    l.acknowledge(1, "a");
    assert.deepEqual(l.latestAcknowledged(), { seq: 3, value: "c" });
    assert.deepEqual(
      l.acknowledgedWrites().map((w) => w.seq),
      [1, 3],
    );
  });
});
