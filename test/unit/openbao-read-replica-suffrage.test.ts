import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { Writes } from "../../src/targets/openbao/apply.js";
import type { AutopilotState } from "../../src/targets/openbao/baoclient/autopilot-state.js";
import { type BaoClient, BaoRequestError } from "../../src/targets/openbao/baoclient/client.js";
import type { ServiceContext } from "../../src/targets/openbao/services.js";
import type { PassResult } from "../../src/targets/openbao/status.js";
import type { StepDeps } from "../../src/targets/openbao/steps/context.js";
import { DEMOTE_RETRY_MS, DemoteRefusals } from "../../src/targets/openbao/steps/demote-refusals.js";
import { keepReadReplicasNonVoters } from "../../src/targets/openbao/steps/read-replica-suffrage.js";
import { AutopilotChecks } from "../../src/targets/openbao/workload/autopilot/autopilot.js";
import {
  readReplicasSettled,
  readReplicasToDemote,
} from "../../src/targets/openbao/workload/autopilot/read-replica-suffrage.js";

// Issue 41: a read replica restored from another cluster's snapshot fell off Autopilot's permanent
// non-voter list (it lives in the replicated data) and was promoted to a voter once the voters
// restarted. The workload controller puts it back on the list.

const server = (id: string, nodeType: string) => ({
  id,
  address: `${id}:8201`,
  status: nodeType === "non-voter" ? "non-voter" : "voter",
  healthy: true,
  nodeType,
  version: "2.7.2",
  lastIndex: 10,
});
const state = (types: Record<string, string>): AutopilotState => ({
  healthy: true,
  failureTolerance: 0,
  leader: "demo-0",
  voters: Object.keys(types).filter((id) => types[id] !== "non-voter"),
  nonVoters: Object.keys(types).filter((id) => types[id] === "non-voter"),
  servers: Object.fromEntries(Object.entries(types).map(([id, t]) => [id, server(id, t)])),
});

describe("read replicas on Autopilot's non-voter list (pure)", () => {
  it("a read replica Autopilot types as a voter is to be demoted; one already typed non-voter is not", () => {
    const s = state({ "demo-0": "voter", "demo-read-0": "voter", "demo-read-1": "non-voter" });
    assert.deepEqual(readReplicasToDemote(s, ["demo-read-0", "demo-read-1"]), ["demo-read-0"]);
    assert.equal(readReplicasSettled(s, ["demo-read-0", "demo-read-1"]), false);
  });

  it("a replica not yet a member is not demoted (it joins as a non-voter) and is not settled", () => {
    const s = state({ "demo-0": "voter" });
    assert.deepEqual(readReplicasToDemote(s, ["demo-read-0"]), []);
    assert.equal(readReplicasSettled(s, ["demo-read-0"]), false);
  });

  it("voters are never touched, whatever their type", () => {
    const s = state({ "demo-0": "voter", "demo-1": "voter", "demo-read-0": "non-voter" });
    assert.deepEqual(readReplicasToDemote(s, ["demo-read-0"]), []);
    assert.equal(readReplicasSettled(s, ["demo-read-0"]), true);
  });
});

describe("keepReadReplicasNonVoters", () => {
  const cluster = (readReplicas: number) =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "demo", namespace: "ns", uid: "u1" },
      spec: { replicas: 1, readReplicas: { replicas: readReplicas } },
      status: { activeLeader: "demo-0" },
    }) as unknown as OpenBaoCluster;
  const setup = (types: Record<string, string>[], demoteStatus?: number) => {
    const calls: string[] = [];
    const events: string[] = [];
    let n = 0;
    const clock = { now: 1_000_000 };
    const bao = {
      autopilotDetail: async () => {
        calls.push("state");
        return state(types[Math.min(n++, types.length - 1)]!);
      },
      demote: async (_t: string, id: string) => {
        calls.push(`demote ${id}`);
        // What BaoClient.demote throws for an answer it does not accept.
        if (demoteStatus)
          throw new BaoRequestError(
            "demo-0",
            demoteStatus,
            `demo-0: sys/storage/raft/demote answered HTTP ${demoteStatus}: permission denied`,
          );
      },
    } as unknown as BaoClient;
    const ctx = {
      reader: { get: async (_t: unknown, name: string) => ({ metadata: { name, uid: `uid-${name}` } }) },
      events: {
        record: (_o: unknown, e: { type: string; reason: string; note: string }) =>
          events.push(`${e.type} ${e.reason}: ${e.note}`),
      },
      now: () => new Date(clock.now),
    } as unknown as ServiceContext;
    return { calls, events, bao, ctx, clock, checks: new AutopilotChecks(), refusals: new DemoteRefusals() };
  };
  const pass = (
    c: OpenBaoCluster,
    t: ReturnType<typeof setup>,
    writes: Writes,
    result = {} as PassResult,
  ) => ({
    cluster: c,
    ctx: t.ctx,
    deps: { autopilotChecks: t.checks, demoteRefusals: t.refusals } as unknown as StepDeps,
    writes,
    result,
  });

  it("demotes a read replica typed as a voter, says so once, and stops asking once it is settled", async () => {
    const t = setup([
      { "demo-0": "voter", "demo-read-0": "voter" },
      { "demo-0": "voter", "demo-read-0": "non-voter" },
    ]);
    const run = (w: Writes) =>
      keepReadReplicasNonVoters(
        pass(cluster(1), t, w),
        async () => t.bao,
        async () => "tok",
        "root-token",
      );
    const first = new Writes(false);
    await run(first);
    assert.deepEqual(t.calls, ["state", "demote demo-read-0"]);
    assert.deepEqual(first.applied, ["autopilot non-voter demo-read-0"]);
    assert.equal(t.events.length, 1);
    assert.match(t.events[0]!, /^Normal AutopilotConfigured: .*demo-read-0 non-voters/);
    await run(new Writes(false)); // looks again after a demotion, finds it settled
    await run(new Writes(false)); // same pods, leader and restore: asks nothing
    assert.deepEqual(t.calls, ["state", "demote demo-read-0", "state"]);
    assert.equal(t.events.length, 1);
  });

  it("observe-only reports the demotion and makes none", async () => {
    const t = setup([{ "demo-0": "voter", "demo-read-0": "voter" }]);
    const w = new Writes(true);
    await keepReadReplicasNonVoters(
      pass(cluster(1), t, w),
      async () => t.bao,
      async () => "tok",
      "root-token",
    );
    assert.deepEqual(t.calls, ["state"]);
    assert.deepEqual(w.applied, ["autopilot non-voter demo-read-0"]);
    assert.equal(t.events.length, 0);
  });

  it("a cluster without read replicas asks OpenBao nothing", async () => {
    const t = setup([{ "demo-0": "voter" }]);
    await keepReadReplicasNonVoters(
      pass(cluster(0), t, new Writes(false)),
      async () => t.bao,
      async () => "tok",
      "root-token",
    );
    assert.deepEqual(t.calls, []);
  });

  it("the operator role refused the demotion (403): a Warning and the condition name the path and the line to add, and it is not asked again for a while", async () => {
    const t = setup([{ "demo-0": "voter", "demo-read-0": "voter" }], 403);
    const run = async () => {
      const result = {} as PassResult;
      await keepReadReplicasNonVoters(
        pass(cluster(1), t, new Writes(false), result),
        async () => t.bao,
        async () => "tok",
        "operator-role",
      );
      return result;
    };
    const first = await run();
    assert.deepEqual(t.calls, ["state", "demote demo-read-0"]);
    assert.match(first.readReplicaSuffrage ?? "", /refuses sys\/storage\/raft\/demote \(HTTP 403\)/);
    assert.match(first.readReplicaSuffrage ?? "", /demo-read-0/);
    assert.ok(
      first.readReplicaSuffrage?.endsWith(
        'add this line to policy openbao-operator: path "sys/storage/raft/demote" { capabilities = ["update"] }',
      ),
      first.readReplicaSuffrage,
    );
    assert.equal(t.events.length, 1);
    assert.match(t.events[0]!, /^Warning DemoteRefused: OpenBao refuses sys\/storage\/raft\/demote/);
    // The next passes still report it, without asking OpenBao and without another event.
    t.clock.now += DEMOTE_RETRY_MS - 1;
    const quiet = await run();
    assert.equal(quiet.readReplicaSuffrage, first.readReplicaSuffrage);
    assert.deepEqual(t.calls, ["state", "demote demo-read-0"]);
    // After the back-off it is asked again (the grant may have been added); still refused: no new event.
    t.clock.now += 1;
    const again = await run();
    assert.equal(again.readReplicaSuffrage, first.readReplicaSuffrage);
    assert.deepEqual(t.calls, ["state", "demote demo-read-0", "state", "demote demo-read-0"]);
    assert.equal(t.events.length, 1);
  });

  it("with the root token a 403 is thrown to the caller (the token is unknown, said as RootTokenRefused)", async () => {
    const t = setup([{ "demo-0": "voter", "demo-read-0": "voter" }], 403);
    const result = {} as PassResult;
    await assert.rejects(
      keepReadReplicasNonVoters(
        pass(cluster(1), t, new Writes(false), result),
        async () => t.bao,
        async () => "tok",
        "root-token",
      ),
      (e: unknown) => e instanceof BaoRequestError && e.status === 403,
    );
    assert.equal(result.readReplicaSuffrage, undefined);
    assert.equal(t.events.length, 0);
  });

  it("other failures of the operator role's demotion are thrown (retried next pass), not reported as a missing grant", async () => {
    const t = setup([{ "demo-0": "voter", "demo-read-0": "voter" }], 500);
    const result = {} as PassResult;
    await assert.rejects(
      keepReadReplicasNonVoters(
        pass(cluster(1), t, new Writes(false), result),
        async () => t.bao,
        async () => "tok",
        "operator-role",
      ),
      /HTTP 500/,
    );
    assert.equal(result.readReplicaSuffrage, undefined);
  });
});
