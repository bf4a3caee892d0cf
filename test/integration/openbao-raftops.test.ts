import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  allJoined,
  allVoters,
  caughtUp,
  demoteAll,
  leaderIn,
  noneVote,
  presentIds,
  promoteAll,
  quorumWithin,
  RaftClient,
  type RaftOps,
  removeAll,
  stepDownIfLeading,
} from "../../src/targets/openbao/adminops/upgrade/raftops/index.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { waitUntil } from "../../src/testenv/wait.js";

// The Raft membership moves of a blue-green upgrade, on a real mixed-version cluster on loopback:
// three 2.6.2 voters (blue), three 2.7.2 nodes (green) joined as non-voters, then promote, demote,
// move leadership, remove, with a KV write after each step that must still read back at the end.

const BLUE = "2.6.2";
const GREEN = "2.7.2";

async function keepAlive<T>(p: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(timer);
  }
}

describe("raftops: blue-green membership on a mixed 2.6.2/2.7.2 Raft cluster", () => {
  let bao: RaftOpenBao;
  let blue: string[];
  let green: string[];
  const written: string[] = [];
  const clientOf = (id: string) => {
    const node = bao.nodes.find((n) => n.id === id);
    if (!node) throw new Error(`no node ${id}`);
    return new RaftClient({ address: node.addr });
  };
  const ops = (via: string): RaftOps => ({ client: clientOf(via), token: bao.rootToken });
  const state = (via: string) => clientOf(via).autopilotDetail(bao.rootToken);
  const waitFor = (what: string, via: string, check: (s: Awaited<ReturnType<typeof state>>) => boolean) =>
    waitUntil(async () => check(await state(via)), { what, timeoutMs: 60_000, intervalMs: 250 });

  async function write(via: string, key: string): Promise<void> {
    const node = bao.nodes.find((n) => n.id === via)!;
    await baoCall(node.addr, bao.rootToken, "POST", `secret/data/${key}`, { data: { v: key } });
    written.push(key);
  }

  before(async () => {
    bao = await startRaftOpenBao({ nodes: 3, version: BLUE });
    blue = bao.nodes.map((n) => n.id);
    await baoCall(bao.addr, bao.rootToken, "POST", "sys/mounts/secret", {
      type: "kv",
      options: { version: "2" },
    });
    await waitUntil(
      async () => {
        try {
          await write(blue[0]!, "before-green");
          return true;
        } catch (e) {
          if (String(e).includes("Upgrading from non-versioned")) return false;
          throw e;
        }
      },
      { what: "the KV v2 mount to accept writes", timeoutMs: 60_000, intervalMs: 200 },
    );
  });
  after(async () => {
    if (bao) await keepAlive(bao.stop());
  });

  it("green joins through retry_join_as_non_voter and stays a non-voter", async () => {
    const added = [];
    for (let i = 0; i < 3; i++) added.push(await bao.addNode({ version: GREEN, nonVoter: true }));
    green = added.map((n) => n.id);
    await waitFor("green to join and catch up", blue[0]!, (s) => allJoined(s, green) && caughtUp(s, green));
    // Autopilot promotes an ordinary joiner after server_stabilization_time (1 s here); give it
    // several reconcile passes (autopilot_reconcile_interval is 1 s) and check it left green alone.
    const stableSince = Date.now();
    await waitUntil(async () => Date.now() - stableSince > 5_000 && (await state(blue[0]!)).healthy, {
      what: "five seconds of Autopilot passes",
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    const s = await state(blue[0]!);
    assert.deepEqual([...s.voters].sort(), [...blue].sort(), "only blue votes");
    assert.deepEqual([...s.nonVoters].sort(), [...green].sort(), "green are non-voters");
    assert.equal(s.servers[green[0]!]?.version, GREEN);
    assert.equal(s.servers[blue[0]!]?.version, BLUE);
    assert.ok(leaderIn(s, blue));
    await write(green[0]!, "green-non-voter"); // a standby forwards to the active node
  });

  it("promote makes green voters, and a second promote is a no-op", async () => {
    const s = await state(blue[0]!);
    assert.deepEqual((await promoteAll(ops(blue[0]!), s, green)).sort(), [...green].sort());
    await waitFor("green to vote", blue[0]!, (x) => allVoters(x, green) && x.voters.length === 6);
    // Promoting a voter again: OpenBao answers 500 "server is not a non-voter"; the client takes it as done.
    await clientOf(blue[0]!).promote(bao.rootToken, green[0]!);
    assert.deepEqual(await promoteAll(ops(blue[0]!), await state(blue[0]!), green), []);
    await write(blue[1]!, "six-voters");
  });

  it("demoting blue then stepping the leader down hands leadership to green", async () => {
    let s = await state(green[0]!);
    assert.ok(quorumWithin(s, green) === false, "three of six is not a quorum");
    await demoteAll(ops(green[0]!), s, blue);
    // Autopilot demotes every blue follower; the active node keeps its vote until it steps down.
    await waitFor("blue followers to lose their vote", green[0]!, (x) =>
      noneVote(
        x,
        blue.filter((id) => id !== x.leader),
      ),
    );
    s = await state(green[0]!);
    assert.ok(leaderIn(s, blue));
    assert.ok(s.nonVoters.includes(s.leader), "the active node is marked for demotion");
    assert.ok(quorumWithin(s, green), "green holds a quorum of the voters");
    // Sent to a green standby: OpenBao forwards the step-down to the active node.
    assert.equal(await stepDownIfLeading(ops(green[0]!), s, blue), true);
    await waitFor(
      "a green leader and no blue voter",
      green[0]!,
      (x) => leaderIn(x, green) && noneVote(x, blue),
    );
    s = await state(green[0]!);
    assert.equal(await stepDownIfLeading(ops(green[0]!), s, blue), false);
    const leader = await baoCall(
      bao.nodes.find((n) => n.id === green[0])!.addr,
      undefined,
      "GET",
      "sys/leader",
    );
    assert.ok(
      bao.nodes.filter((n) => green.includes(n.id)).some((n) => n.addr === leader.leader_address),
      `leader ${leader.leader_address} is a green node`,
    );
    await write(green[1]!, "green-leads");
  });

  it("removing blue leaves three 2.7.2 voters holding every write", async () => {
    const s = await state(green[0]!);
    assert.deepEqual((await removeAll(ops(green[0]!), s, blue)).sort(), [...blue].sort());
    await waitFor("blue gone", green[0]!, (x) => presentIds(x, blue).length === 0 && x.healthy);
    // remove-peer of an absent server answers 204: repeating the step after a restart is safe.
    await clientOf(green[0]!).removePeer(bao.rootToken, blue[0]!);
    // A removed server ignores SIGTERM until stop() escalates to SIGKILL; the test keeps the event
    // loop alive meanwhile (the child process itself is unref'd by the harness).
    await keepAlive(Promise.all(bao.nodes.filter((n) => blue.includes(n.id)).map((n) => n.stop())));
    const end = await state(green[0]!);
    assert.deepEqual([...end.voters].sort(), [...green].sort());
    assert.deepEqual(end.nonVoters, []);
    for (const id of green) assert.equal(end.servers[id]?.version, GREEN);
    await write(green[2]!, "after-cleanup");
    // Every green server ends up holding every acknowledged write. A read sent to a standby just after
    // a write through it answered 404 here once (the standby answered from its own, lagging copy), so
    // each read waits for the value instead of taking the first answer.
    for (const id of green) {
      const addr = bao.nodes.find((n) => n.id === id)!.addr;
      for (const key of written)
        await waitUntil(
          async () => (await baoCall(addr, bao.rootToken, "GET", `secret/data/${key}`)).data.data.v === key,
          { what: `${id} to read ${key}`, timeoutMs: 10_000, intervalMs: 100 },
        );
    }
  });
});
