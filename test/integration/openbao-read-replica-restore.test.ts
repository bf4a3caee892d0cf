import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import { readReplicasToDemote } from "../../src/targets/openbao/workload/autopilot/read-replica-suffrage.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { type RaftNode, type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { waitUntil } from "../../src/testenv/wait.js";

// Issue 41 on a real OpenBao Raft cluster on loopback: why a read replica became a voter after a
// restore, and that the operator's call puts it back. A node joined with retry_join_as_non_voter
// is kept a non-voter only by Autopilot's permanent non-voter list, which lives in the replicated
// data: restoring a snapshot taken before the node joined (as a snapshot from another cluster is)
// drops it from the list, and once the active node has restarted (the operator restarts every pod
// after a restore) Autopilot promotes it. sys/storage/raft/demote, as the workload controller sends
// it for a read replica that is off the list, makes it a non-voter again.

describe("a read replica restored with data taken without it (real OpenBao Raft on loopback)", {
  timeout: 10 * 60_000,
}, () => {
  let bao: RaftOpenBao;
  let replica: RaftNode;
  let snapshot: ArrayBuffer;
  const client = () => new BaoClient({ address: bao.nodes[0]!.addr });
  const suffrage = async (id: string) => {
    const config = await baoCall(bao.nodes[0]!.addr, bao.rootToken, "GET", "sys/storage/raft/configuration");
    const server = (config.data.config.servers as { node_id: string; voter: boolean }[]).find(
      (s) => s.node_id === id,
    );
    const state = await client().autopilotDetail(bao.rootToken);
    return { voter: server?.voter, nodeType: state.servers[id]?.nodeType };
  };
  const waitFor = (what: string, check: (s: Awaited<ReturnType<typeof suffrage>>) => boolean) =>
    waitUntil(async () => check(await suffrage(replica.id)), { what, timeoutMs: 90_000, intervalMs: 500 });

  before(async () => {
    bao = await startRaftOpenBao({ nodes: 1 });
    // The snapshot from before the replica: no permanent non-voter in it.
    const res = await fetch(`${bao.addr}/v1/sys/storage/raft/snapshot`, {
      headers: { "x-vault-token": bao.rootToken },
    });
    assert.equal(res.status, 200);
    snapshot = await res.arrayBuffer();
    replica = await bao.addNode({ nonVoter: true });
  });
  after(async () => {
    await bao?.stop();
  });

  it("joined with retry_join_as_non_voter, the replica is on Autopilot's non-voter list", async () => {
    await waitFor("the replica a non-voter member", (s) => s.voter === false && s.nodeType === "non-voter");
    assert.deepEqual(readReplicasToDemote(await client().autopilotDetail(bao.rootToken), [replica.id]), []);
  });

  it("after the restore and the active node's restart, Autopilot no longer lists it and promotes it", async () => {
    const res = await fetch(`${bao.addr}/v1/sys/storage/raft/snapshot`, {
      method: "POST",
      headers: { "x-vault-token": bao.rootToken },
      body: snapshot,
    });
    assert.equal(res.status, 204, await res.text());
    const active = bao.nodes[0]!;
    await active.stop();
    await active.start();
    await waitUntil(
      async () => {
        await active.unseal();
        return true;
      },
      { what: "the active node unsealed again", timeoutMs: 60_000, intervalMs: 500 },
    );
    await waitFor("the replica promoted to a voter", (s) => s.voter === true);
    assert.deepEqual(readReplicasToDemote(await client().autopilotDetail(bao.rootToken), [replica.id]), [
      replica.id,
    ]);
  });

  it("the operator's demote puts it back on the list, and Autopilot makes it a non-voter again", async () => {
    await client().demote(bao.rootToken, replica.id);
    await waitFor("the replica a non-voter again", (s) => s.voter === false && s.nodeType === "non-voter");
    // Asked again (another operator pass before it saw the new state), it is still done.
    await client().demote(bao.rootToken, replica.id);
    assert.deepEqual(readReplicasToDemote(await client().autopilotDetail(bao.rootToken), [replica.id]), []);
  });
});
