import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { baoCall } from "../../src/testenv/baohttp.js";
import { type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { waitUntil } from "../../src/testenv/wait.js";
import { startKvLoad, summarizeLoad } from "../support/kv-load.js";

// The load client the upgrade proofs rely on, against three real OpenBao servers in one Raft
// cluster on loopback. Requests go to all three in turn, as a client Service would spread them, so
// two in three land on a standby and reach the active node through it. The active node steps down
// while the load runs: whatever window of failures that opens is measured and printed; no
// acknowledged write may be lost. A deleted key proves the read-back can find a loss at all.

describe("kv-load against a 3-node Raft cluster", { timeout: 10 * 60_000 }, () => {
  let bao: RaftOpenBao;

  before(
    async () => {
      bao = await startRaftOpenBao({ nodes: 3 });
    },
    { timeout: 5 * 60_000 },
  );
  after(async () => {
    await bao?.stop();
  });

  const leaderAddr = async (): Promise<string> => {
    const l = await baoCall(bao.addr, undefined, "GET", "sys/leader");
    return String(l.leader_address);
  };

  it("the active node steps down during the load: the leader change is seen and no acknowledged write is lost", {
    timeout: 5 * 60_000,
  }, async () => {
    const load = await startKvLoad({ addresses: bao.addrs, token: bao.rootToken, intervalMs: 20 });
    let stopped = false;
    try {
      await load.acknowledgedMore(30);
      const before = await leaderAddr();
      assert.ok(bao.addrs.includes(before), `a leader among the nodes (${before})`);
      await baoCall(before, bao.rootToken, "PUT", "sys/step-down");
      // The client's own leader polling must see the move.
      await waitUntil(async () => load.snapshot().leaderChanges >= 1, {
        what: "the load client to see a new leader",
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      assert.notEqual(await leaderAddr(), before);
      // Writes flow again after the election.
      await load.acknowledgedMore(30);
      const report = await load.stop();
      stopped = true;
      console.log(`[kv-load] step-down: ${summarizeLoad(report)}; redirects ${report.redirectsFollowed}`);
      if (report.errors.length) console.log(`[kv-load] failures: ${JSON.stringify(report.errors)}`);
      assert.equal(report.lostWrites, 0, `lost: ${report.lostSequences.join(", ")}`);
      assert.equal(report.unverified, 0);
      assert.ok(report.writesAcknowledged >= 60);
      assert.equal(report.writesAttempted, report.writesAcknowledged + report.writesFailed);
      assert.ok(report.leaderChanges >= 1);
      assert.ok(report.failedTimeMs >= 0 && report.failedTimeMs <= report.stoppedAt - report.startedAt);
      // The token never appears in what the client reports.
      assert.ok(!JSON.stringify(report).includes(bao.rootToken));
    } finally {
      if (!stopped) await load.stop({ verifyTimeoutMs: 5000 }).catch(() => undefined);
    }
  });

  it("an acknowledged write deleted behind the client's back is reported lost", {
    timeout: 2 * 60_000,
  }, async () => {
    const load = await startKvLoad({ addresses: [bao.addr], token: bao.rootToken, intervalMs: 10 });
    await load.acknowledgedMore(5);
    const victim = load.acknowledgedSequences()[0]!;
    // All its versions and metadata gone, as a write the cluster dropped would look.
    await baoCall(bao.addr, bao.rootToken, "DELETE", load.keyPath(victim).replace("/data/", "/metadata/"));
    const report = await load.stop();
    console.log(`[kv-load] deletion: ${summarizeLoad(report)}`);
    assert.equal(report.lostWrites, 1);
    assert.deepEqual(report.lostSequences, [victim]);
    assert.equal(report.unverified, 0);
  });
});
