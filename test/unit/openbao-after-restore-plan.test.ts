import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../src/apis/openbaocluster.js";
import { workloadPlaneOf } from "../../src/targets/openbao/opslifecycle/planes.js";
import {
  type AfterRestoreFacts,
  type PodFacts,
  planAfterRestore,
} from "../../src/targets/openbao/restore/after-restore-plan.js";
import { type PassResult, phaseOf } from "../../src/targets/openbao/status.js";
import { workloadRelevant } from "../../src/targets/openbao/target.js";

// The follow-through after a restore, planned from observed state only: voters first, then
// status.restore.restartCompletedAt, then read replicas, then done; and the cluster's phase from it.

const END = new Date("2026-01-01T00:05:00Z");
const at = (s: number) => new Date(END.getTime() + s * 1000);
const pod = (name: string, createdS: number, ready = true, terminating = false): PodFacts => ({
  name,
  uid: `uid-${name}`,
  created: at(createdS),
  ready,
  terminating,
});
const self = { name: "r1", uid: "u-1" };
const facts = (over: Partial<AfterRestoreFacts>): AfterRestoreFacts => ({
  restore: self,
  record: { name: "r1", uid: "u-1" },
  finishedAt: END,
  voters: { pods: [pod("bao-0", -300), pod("bao-1", -300)], desired: 2 },
  readReplicas: { pods: [pod("bao-read-0", -300)], desired: 1 },
  now: at(10),
  timeoutMs: 600_000,
  ...over,
});
const names = (pods: readonly PodFacts[]) => pods.map((p) => p.name);

describe("after a restore: what the follow-through does next", () => {
  it("first records on the cluster that its restart is this restore's (none yet, or another's)", () => {
    assert.deepEqual(planAfterRestore(facts({ record: undefined })), { kind: "record" });
    const other = { name: "r0", uid: "u-0", restartCompletedAt: "2025-12-01T00:00:00Z" };
    assert.deepEqual(planAfterRestore(facts({ record: other })), { kind: "record" });
    // Upstream's uid is the restore's UID; its name stands in only when it has none.
    assert.deepEqual(
      planAfterRestore(facts({ restore: { name: "r1", uid: "" }, record: { name: "r1", uid: "r1" } })).kind,
      "restart",
    );
  });

  it("restarts the voters from before the Job's end, all at once, and never the read replicas with them", () => {
    const step = planAfterRestore(
      facts({ voters: { pods: [pod("bao-0", -300), pod("bao-1", -300, true, true)], desired: 2 } }),
    );
    assert.equal(step.kind, "restart");
    assert.ok(step.kind === "restart");
    assert.equal(step.pool, "voters");
    assert.deepEqual(names(step.pods), ["bao-0"], "one already going is left to go");
  });

  it("waits until every voter is back and Ready, not just gone: deleted and not yet made counts as not back", () => {
    const gone = planAfterRestore(facts({ voters: { pods: [], desired: 2 } }));
    assert.equal(gone.kind, "wait");
    assert.ok(gone.kind === "wait");
    assert.equal(gone.pool, "voters");
    assert.equal(gone.message, "0/2 voter pods back and Ready after the snapshot");
    assert.deepEqual(gone.deadline, at(600));
    const going = planAfterRestore(
      facts({ voters: { pods: [pod("bao-0", 4), pod("bao-1", -300, true, true)], desired: 2 } }),
    );
    assert.equal(going.kind, "wait", "an old voter still terminating is not back");
    const unready = planAfterRestore(
      facts({ voters: { pods: [pod("bao-0", 4), pod("bao-1", 5, false)], desired: 2 } }),
    );
    assert.ok(unready.kind === "wait");
    assert.equal(unready.message, "1/2 voter pods back and Ready after the snapshot");
  });

  it("voters back and Ready: restartCompletedAt — found again from the pods alone after an operator stop", () => {
    const back = facts({ voters: { pods: [pod("bao-0", 4), pod("bao-1", 5)], desired: 2 } });
    assert.deepEqual(planAfterRestore(back), { kind: "votersRestarted", at: at(10) });
    // Stamped no earlier than the newest voter (the API server's clock may be ahead of ours).
    assert.deepEqual(planAfterRestore({ ...back, now: at(2) }), { kind: "votersRestarted", at: at(5) });
  });

  it("then the read replicas from before the voters came back, including one made after the Job ended", () => {
    const step = planAfterRestore(
      facts({
        record: { name: "r1", uid: "u-1", restartCompletedAt: at(30).toISOString() },
        voters: { pods: [pod("bao-0", 4), pod("bao-1", 5)], desired: 2 },
        readReplicas: { pods: [pod("bao-read-0", -300), pod("bao-read-1", 12)], desired: 2 },
        now: at(31),
      }),
    );
    assert.ok(step.kind === "restart");
    assert.equal(step.pool, "readReplicas");
    assert.deepEqual(names(step.pods), ["bao-read-0", "bao-read-1"]);
  });

  it("a read replica made again in the very second the voters were found back is not restarted twice", () => {
    // The node run saw ReadReplicasRestarted twice: the replica was deleted and made again within
    // the second of restartCompletedAt, and whole-second timestamps made it look old.
    const step = planAfterRestore(
      facts({
        record: { name: "r1", uid: "u-1", restartCompletedAt: at(30).toISOString() },
        voters: { pods: [pod("bao-0", 4), pod("bao-1", 5)], desired: 2 },
        readReplicas: { pods: [pod("bao-read-0", 30)], desired: 1 },
        now: at(31),
      }),
    );
    assert.deepEqual(step, { kind: "done" });
  });

  it("waits for the read replicas to be back and Ready, then is done", () => {
    const record = { name: "r1", uid: "u-1", restartCompletedAt: at(30).toISOString() };
    const waiting = planAfterRestore(
      facts({ record, readReplicas: { pods: [pod("bao-read-0", 33, false)], desired: 1 }, now: at(40) }),
    );
    assert.ok(waiting.kind === "wait");
    assert.equal(waiting.pool, "readReplicas");
    assert.equal(waiting.message, "0/1 read-replica pods back and Ready after the snapshot");
    assert.deepEqual(waiting.deadline, at(630));
    const done = planAfterRestore(
      facts({ record, readReplicas: { pods: [pod("bao-read-0", 33)], desired: 1 }, now: at(50) }),
    );
    assert.deepEqual(done, { kind: "done" });
    // No read replicas at all: done as soon as the voters are recorded back.
    assert.deepEqual(planAfterRestore(facts({ record, readReplicas: { pods: [], desired: 0 } })), {
      kind: "done",
    });
  });

  it("past the bound, completes saying what is not Ready; voters that never came back still get the read replicas restarted", () => {
    const stuck = planAfterRestore(
      facts({ voters: { pods: [pod("bao-0", 4, false), pod("bao-1", 5)], desired: 2 }, now: at(600) }),
    );
    assert.ok(stuck.kind === "done");
    assert.equal(stuck.notReady, "1/2 voter pods back and Ready after the snapshot within 600 s");
    assert.deepEqual(names(stuck.restart ?? []), ["bao-read-0"]);
    const record = { name: "r1", uid: "u-1", restartCompletedAt: at(30).toISOString() };
    const replicas = planAfterRestore(
      facts({ record, readReplicas: { pods: [pod("bao-read-0", 33, false)], desired: 1 }, now: at(630) }),
    );
    assert.ok(replicas.kind === "done");
    assert.equal(replicas.notReady, "0/1 read-replica pods back and Ready after the snapshot within 600 s");
    assert.equal(replicas.restart, undefined);
  });
});

describe("the cluster's phase and status.restore", () => {
  const pass = (readReplicas: number): PassResult =>
    ({
      initialized: true,
      desiredReplicas: 1,
      readyReplicas: 1,
      ...(readReplicas ? { readReplicas: { desiredReplicas: readReplicas, readyReplicas: 0 } } : {}),
    }) as PassResult;
  const status = (holder: string | undefined, restartCompletedAt?: string): OpenBaoClusterStatus => ({
    restore: { name: "r1", uid: "u-1", ...(restartCompletedAt ? { restartCompletedAt } : {}) },
    ...(holder ? { operationLock: { operation: "Restore", holder } } : {}),
  });

  it("RestoringReadReplicas while the restore that restarted the voters still holds the lock", () => {
    assert.equal(
      phaseOf(pass(1), status("restore/ns/r1", "2026-01-01T00:05:30Z"), "ns"),
      "RestoringReadReplicas",
    );
  });

  it("Running before the voters are back, without read replicas, for another restore's record, and once released", () => {
    assert.equal(phaseOf(pass(1), status("restore/ns/r1"), "ns"), "Running");
    assert.equal(phaseOf(pass(0), status("restore/ns/r1", "2026-01-01T00:05:30Z"), "ns"), "Running");
    assert.equal(phaseOf(pass(1), status("restore/ns/r2", "2026-01-01T00:05:30Z"), "ns"), "Running");
    assert.equal(phaseOf(pass(1), status(undefined, "2026-01-01T00:05:30Z"), "ns"), "Running");
  });

  it("the voters' restart recorded wakes the workload controller (it writes the phase); the rest of the record does not", () => {
    const c = (restore: OpenBaoClusterStatus["restore"]) =>
      ({
        metadata: { name: "c", generation: 1 },
        spec: {},
        status: { restore },
      }) as unknown as OpenBaoCluster;
    const requested = { name: "r1", uid: "u-1" };
    assert.ok(
      workloadRelevant(c(requested), c({ ...requested, restartCompletedAt: "2026-01-01T00:05:30Z" })),
    );
    assert.ok(!workloadRelevant(c(undefined), c(requested)));
  });

  it("status.restore belongs to the restore's writer: the workload's plane never carries it", () => {
    const plane = workloadPlaneOf({ ...status("restore/ns/r1", "2026-01-01T00:05:30Z"), phase: "Running" });
    assert.deepEqual(plane, { phase: "Running" });
  });
});
