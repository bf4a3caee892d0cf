import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { recordStepFailure } from "../../src/targets/openbao/adminops/upgrade/bluegreen/attempts.js";
import {
  BREAK_GLASS_STEPS,
  PHASE_TIMEOUT_MS,
  type PlanIds,
  planBlueGreen,
} from "../../src/targets/openbao/adminops/upgrade/bluegreen/plan.js";
import type {
  BlueGreenStatus,
  Observed,
  Plan,
  PlanSpec,
  PlanStatus,
  RaftView,
} from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";

const t0 = new Date("2026-03-01T10:00:00Z");
const later = (ms: number) => new Date(t0.getTime() + ms);
const ids: PlanIds = { operationID: "op-1", greenRevision: "g-2-7-2", nonce: "nonce-1" };
const OLD = "openbao/openbao:2.6.2";
const NEW = "openbao/openbao:2.7.2";

const spec = (over: Partial<PlanSpec> = {}): PlanSpec => ({
  version: "2.7.2",
  image: NEW,
  replicas: 3,
  settings: undefined,
  requests: {},
  ...over,
});
const raftBefore: RaftView = {
  greenJoined: false,
  greenCaughtUp: false,
  greenVoting: false,
  blueDemoted: false,
  blueVoting: true,
  greenDemoted: true,
  leaderOnGreen: false,
  leaderOnBlue: true,
  bluePresent: 3,
  greenPresent: 0,
  blueQuorum: true,
  leaderSideFollowersVote: false,
};
const obs = (over: Partial<Observed> = {}, raft: Partial<RaftView> = {}): Observed => ({
  now: t0,
  greenReady: 0,
  blueReady: 3,
  raft: { ...raftBefore, ...raft },
  ...over,
});
const inPhase = (phase: BlueGreenStatus["phase"], over: Partial<BlueGreenStatus> = {}): PlanStatus => ({
  currentVersion: "2.6.2",
  currentImage: OLD,
  blueGreen: {
    phase,
    operationID: "op-1",
    greenRevision: "g-2-7-2",
    blueImage: OLD,
    greenImage: NEW,
    greenVersion: "2.7.2",
    blueReplicas: 3,
    greenReplicas: 3,
    manualPromotionRequired: false,
    startTime: t0.toISOString(),
    jobFailureCount: 0,
    ...over,
  },
});
const phaseOf = (p: Plan) => p.blueGreen?.phase;

describe("blue-green plan: forward path", () => {
  it("does nothing when the version and image already run", () => {
    const p = planBlueGreen(spec({ version: "2.6.2", image: OLD }), inPhase("Idle"), obs(), ids);
    assert.deepEqual(p, { actions: [] });
  });

  it("right after a completed upgrade, a status.currentVersion not yet observed does not start it again", () => {
    const done: PlanStatus = {
      currentVersion: "2.6.2",
      currentImage: NEW,
      blueGreen: {
        phase: "Idle",
        operationID: "op-1",
        blueRevision: "g-2-7-2",
        blueImage: NEW,
        blueReplicas: 3,
      },
    };
    assert.deepEqual(planBlueGreen(spec(), done, obs(), ids), { actions: [] });
    // The next version starts from the serving revision.
    const next = planBlueGreen(spec({ version: "2.8.0", image: "openbao/openbao:2.8.0" }), done, obs(), ids);
    assert.equal(phaseOf(next), "DeployingGreen");
    assert.equal(next.blueGreen?.blueRevision, "g-2-7-2");
    assert.equal(next.blueGreen?.blueImage, NEW);
  });

  it("Idle → DeployingGreen pins blue to the running image and records the attempt", () => {
    const p = planBlueGreen(spec(), { currentVersion: "2.6.2", currentImage: OLD }, obs(), ids);
    assert.equal(phaseOf(p), "DeployingGreen");
    assert.equal(p.blueGreen?.blueImage, OLD);
    assert.equal(p.blueGreen?.greenImage, NEW);
    assert.equal(p.blueGreen?.greenRevision, "g-2-7-2");
    assert.equal(p.blueGreen?.operationID, "op-1");
    assert.equal(p.blueGreen?.greenReplicas, 3);
    assert.equal(p.blueGreen?.manualPromotionRequired, false);
    assert.equal(p.condition?.reason, "UpgradeStarted");
    assert.deepEqual(p.actions, []);
  });

  it("autoPromote false marks the attempt for manual promotion", () => {
    const s = spec({ settings: { autoPromote: false, preUpgradeSnapshot: false } });
    const p = planBlueGreen(s, { currentVersion: "2.6.2", currentImage: OLD }, obs(), ids);
    assert.equal(p.blueGreen?.manualPromotionRequired, true);
  });

  it("waits for the pre-upgrade snapshot, refuses to start when it failed", () => {
    const s = spec({ settings: { autoPromote: true, preUpgradeSnapshot: true } });
    const st = { currentVersion: "2.6.2", currentImage: OLD };
    const running = planBlueGreen(s, st, obs({ snapshot: { state: "Running" } }), ids);
    assert.equal(running.blueGreen, undefined);
    assert.ok(running.requeueAfterMs);
    const failed = planBlueGreen(s, st, obs({ snapshot: { state: "Failed", message: "bucket gone" } }), ids);
    assert.equal(failed.blueGreen, undefined);
    assert.equal(failed.condition?.reason, "PreUpgradeBackupFailed");
    const ok = planBlueGreen(s, st, obs({ snapshot: { state: "Succeeded", jobName: "snap-1" } }), ids);
    assert.equal(phaseOf(ok), "DeployingGreen");
    assert.equal(ok.blueGreen?.preUpgradeSnapshotJobName, "snap-1");
  });

  it("DeployingGreen waits for every green pod, then → JoiningMesh", () => {
    const wait = planBlueGreen(spec(), inPhase("DeployingGreen"), obs({ greenReady: 2 }), ids);
    assert.equal(phaseOf(wait), "DeployingGreen");
    assert.match(wait.condition?.message ?? "", /2\/3/);
    const go = planBlueGreen(
      spec(),
      inPhase("DeployingGreen"),
      obs({ greenReady: 3, now: later(1000) }),
      ids,
    );
    assert.equal(phaseOf(go), "JoiningMesh");
    assert.equal(go.blueGreen?.startTime, later(1000).toISOString());
  });

  it("JoiningMesh → Syncing once every green server is a Raft member", () => {
    assert.equal(
      phaseOf(planBlueGreen(spec(), inPhase("JoiningMesh"), obs({ greenReady: 3 }), ids)),
      "JoiningMesh",
    );
    const p = planBlueGreen(
      spec(),
      inPhase("JoiningMesh"),
      obs({ greenReady: 3 }, { greenJoined: true }),
      ids,
    );
    assert.equal(phaseOf(p), "Syncing");
  });

  it("a sealed green pod is named while green waits to join or catch up, instead of a plain 'catching up'", () => {
    const sealed = { greenReady: 2, greenSealed: ["bao-g-2-7-2-0"] };
    const syncing = planBlueGreen(spec(), inPhase("Syncing"), obs(sealed, { greenJoined: true }), ids);
    assert.equal(phaseOf(syncing), "Syncing");
    assert.equal(syncing.condition?.reason, "InProgress");
    assert.match(
      syncing.condition?.message ?? "",
      /green pod bao-g-2-7-2-0 sealed: green cannot catch up until it is unsealed/,
    );
    const joining = planBlueGreen(
      spec(),
      inPhase("JoiningMesh"),
      obs({ ...sealed, greenSealed: ["a", "b"] }),
      ids,
    );
    assert.match(joining.condition?.message ?? "", /green pods a, b sealed: .* until they are unsealed/);
    // Not sealed: the plain wait, as before.
    const behind = planBlueGreen(
      spec(),
      inPhase("Syncing"),
      obs({ greenReady: 3 }, { greenJoined: true }),
      ids,
    );
    assert.equal(behind.condition?.message, "green is catching up with the Raft log");
  });

  it("Syncing → Promoting once green caught up and held minSyncDuration", () => {
    const s = spec({
      settings: { autoPromote: true, preUpgradeSnapshot: false, verification: { minSyncDuration: "30s" } },
    });
    const caught = { greenJoined: true, greenCaughtUp: true };
    const behind = planBlueGreen(s, inPhase("Syncing"), obs({ greenReady: 3 }, { greenJoined: true }), ids);
    assert.equal(phaseOf(behind), "Syncing");
    const early = planBlueGreen(
      s,
      inPhase("Syncing"),
      obs({ greenReady: 3, now: later(10_000) }, caught),
      ids,
    );
    assert.equal(phaseOf(early), "Syncing");
    const held = planBlueGreen(
      s,
      inPhase("Syncing"),
      obs({ greenReady: 3, now: later(30_000) }, caught),
      ids,
    );
    assert.equal(phaseOf(held), "Promoting");
  });

  it("Syncing with manual promotion waits for a new promote request and records it once", () => {
    const caught = { greenJoined: true, greenCaughtUp: true };
    const st = inPhase("Syncing", { manualPromotionRequired: true });
    const paused = planBlueGreen(spec(), st, obs({ greenReady: 3 }, caught), ids);
    assert.equal(paused.condition?.reason, "UpgradePaused");
    assert.equal(phaseOf(paused), "Syncing");
    const stale = planBlueGreen(
      spec({ requests: { promote: "p1" } }),
      { ...st, upgradeRequests: { lastHandledPromote: "p1" } },
      obs({ greenReady: 3 }, caught),
      ids,
    );
    assert.equal(stale.condition?.reason, "UpgradePaused", "a handled value does not act again");
    const go = planBlueGreen(spec({ requests: { promote: "p2" } }), st, obs({ greenReady: 3 }, caught), ids);
    assert.equal(phaseOf(go), "Promoting");
    assert.equal(go.upgradeRequests?.lastHandledPromote, "p2");
  });

  it("Promoting asks for green's promotion until green votes, then → DemotingBlue", () => {
    const p = planBlueGreen(spec(), inPhase("Promoting"), obs({ greenReady: 3 }, { greenJoined: true }), ids);
    assert.deepEqual(p.actions, [{ kind: "promote", side: "green" }]);
    const done = planBlueGreen(
      spec(),
      inPhase("Promoting"),
      obs({ greenReady: 3 }, { greenVoting: true }),
      ids,
    );
    assert.equal(phaseOf(done), "DemotingBlue");
    assert.deepEqual(done.actions, []);
  });

  it("DemotingBlue demotes blue, steps a blue leader down, → Cleanup when green leads", () => {
    const r = { greenVoting: true };
    const p = planBlueGreen(spec(), inPhase("DemotingBlue"), obs({ greenReady: 3 }, r), ids);
    assert.deepEqual(p.actions, [{ kind: "demote", side: "blue" }, { kind: "stepDown" }]);
    const followersVote = planBlueGreen(
      spec(),
      inPhase("DemotingBlue"),
      obs({ greenReady: 3 }, { ...r, leaderSideFollowersVote: true }),
      ids,
    );
    assert.deepEqual(
      followersVote.actions,
      [{ kind: "demote", side: "blue" }],
      "no step-down while blue followers still vote",
    );
    const greenLeads = { ...r, leaderOnBlue: false, leaderOnGreen: true };
    const q = planBlueGreen(spec(), inPhase("DemotingBlue"), obs({ greenReady: 3 }, greenLeads), ids);
    assert.deepEqual(q.actions, [{ kind: "demote", side: "blue" }]);
    const done = planBlueGreen(
      spec(),
      inPhase("DemotingBlue"),
      obs({ greenReady: 3 }, { ...greenLeads, blueDemoted: true, blueVoting: false }),
      ids,
    );
    assert.equal(phaseOf(done), "Cleanup");
  });

  it("Cleanup removes blue, then completes: green becomes the serving revision", () => {
    const r = { greenVoting: true, blueDemoted: true, leaderOnGreen: true, leaderOnBlue: false };
    const p = planBlueGreen(spec(), inPhase("Cleanup"), obs({ greenReady: 3 }, r), ids);
    assert.deepEqual(p.actions, [{ kind: "remove", side: "blue" }]);
    const done = planBlueGreen(
      spec(),
      inPhase("Cleanup"),
      obs({ greenReady: 3 }, { ...r, bluePresent: 0 }),
      ids,
    );
    assert.equal(done.completed, true);
    assert.equal(phaseOf(done), "Idle");
    assert.equal(done.blueGreen?.blueRevision, "g-2-7-2");
    assert.equal(done.blueGreen?.blueImage, NEW);
    assert.equal(done.blueGreen?.greenRevision, undefined);
    assert.equal(done.condition?.reason, "UpgradeComplete");
  });

  it("waits without acting while Raft cannot be read", () => {
    for (const phase of ["Promoting", "DemotingBlue", "Cleanup", "RollingBack", "RollbackCleanup"] as const) {
      const p = planBlueGreen(spec(), inPhase(phase), obs({ greenReady: 3, raft: undefined }), ids);
      assert.deepEqual(p.actions, [], phase);
      assert.equal(phaseOf(p), phase);
    }
  });
});

describe("blue-green plan: failures and rollback", () => {
  it("a green that cannot run, before it votes, → RollbackCleanup (only non-voters to remove)", () => {
    for (const phase of ["DeployingGreen", "JoiningMesh", "Syncing"] as const) {
      const p = planBlueGreen(spec(), inPhase(phase), obs({ greenFailure: "ImagePullBackOff" }), ids);
      assert.equal(phaseOf(p), "RollbackCleanup", phase);
      assert.match(p.blueGreen?.rollbackReason ?? "", /ImagePullBackOff/);
      assert.equal(p.blueGreen?.rollbackAttempt, 1);
      assert.equal(p.condition?.reason, "UpgradeRollback");
    }
  });

  it("a green that never gets ready times out into rollback", () => {
    const p = planBlueGreen(
      spec(),
      inPhase("DeployingGreen"),
      obs({ greenReady: 1, now: later(PHASE_TIMEOUT_MS + 1) }),
      ids,
    );
    assert.equal(phaseOf(p), "RollbackCleanup");
    const j = planBlueGreen(
      spec(),
      inPhase("JoiningMesh"),
      obs({ greenReady: 3, now: later(PHASE_TIMEOUT_MS + 1) }),
      ids,
    );
    assert.equal(phaseOf(j), "RollbackCleanup");
  });

  it("autoRollback off holds with UpgradeFailed instead", () => {
    const s = spec({
      settings: {
        autoPromote: true,
        preUpgradeSnapshot: false,
        autoRollback: { enabled: false, onJobFailure: true, onValidationFailure: true },
      },
    });
    const p = planBlueGreen(s, inPhase("DeployingGreen"), obs({ greenFailure: "ErrImagePull" }), ids);
    assert.equal(phaseOf(p), "DeployingGreen");
    assert.equal(p.condition?.reason, "UpgradeFailed");
    // As the runbook says: another spec.version does not replace a held green; a rollback request ends it.
    const other = { ...s, version: "2.7.3", image: "openbao/openbao:2.7.3" };
    const still = planBlueGreen(other, inPhase("DeployingGreen"), obs({ greenFailure: "ErrImagePull" }), ids);
    assert.equal(still.condition?.reason, "UpgradeFailed");
    assert.equal(still.blueGreen?.greenImage, NEW, "green keeps the image it was started with");
    const back = planBlueGreen(
      { ...other, requests: { rollback: "r1" } },
      inPhase("DeployingGreen"),
      obs({ greenFailure: "ErrImagePull" }),
      ids,
    );
    assert.equal(phaseOf(back), "RollbackCleanup");
  });

  it("failed steps count in a row within a phase: a new phase starts again at 1", () => {
    const s = spec({ settings: { autoPromote: true, preUpgradeSnapshot: false, maxJobFailures: 2 } });
    const once = recordStepFailure(inPhase("DemotingBlue").blueGreen!, "step-down: 500");
    assert.equal(once.jobFailureCount, 1);
    const st = inPhase("DemotingBlue");
    const notYet = planBlueGreen(
      s,
      { ...st, blueGreen: once },
      obs({ greenReady: 3 }, { greenVoting: true }),
      ids,
    );
    assert.notEqual(phaseOf(notYet), "RollingBack", "one failure of two allowed is retried");
    // The plan moved on (its count reset to 0): the next failure is the new phase's first.
    const moved = { ...once, phase: "Promoting" as const, jobFailureCount: 0 };
    assert.equal(recordStepFailure(moved, "promote: 500").jobFailureCount, 1);
    assert.equal(recordStepFailure(moved, "x".repeat(300)).lastJobFailure?.length, 250);
  });

  it("maxJobFailures failed steps after green votes → RollingBack; onJobFailure off holds", () => {
    const s = spec({ settings: { autoPromote: true, preUpgradeSnapshot: false, maxJobFailures: 2 } });
    let st = inPhase("DemotingBlue");
    st = {
      ...st,
      blueGreen: recordStepFailure(recordStepFailure(st.blueGreen!, "step-down: 500"), "step-down: 500"),
    };
    assert.equal(st.blueGreen?.jobFailureCount, 2);
    const p = planBlueGreen(s, st, obs({ greenReady: 3 }, { greenVoting: true }), ids);
    assert.equal(phaseOf(p), "RollingBack");
    const off = spec({
      settings: {
        autoPromote: true,
        preUpgradeSnapshot: false,
        maxJobFailures: 2,
        autoRollback: { enabled: true, onJobFailure: false, onValidationFailure: true },
      },
    });
    const held = planBlueGreen(off, st, obs({ greenReady: 3 }, { greenVoting: true }), ids);
    assert.equal(phaseOf(held), "DemotingBlue");
    assert.equal(held.condition?.reason, "UpgradeFailed");
  });

  it("a rollback request acts once: early → RollbackCleanup, voting → RollingBack, Cleanup ignores it", () => {
    const req = spec({ requests: { rollback: "r1" } });
    const early = planBlueGreen(req, inPhase("Syncing"), obs({ greenReady: 3 }), ids);
    assert.equal(phaseOf(early), "RollbackCleanup");
    assert.equal(early.upgradeRequests?.lastHandledRollback, "r1");
    const voting = planBlueGreen(req, inPhase("Promoting"), obs({ greenReady: 3 }), ids);
    assert.equal(phaseOf(voting), "RollingBack");
    const late = planBlueGreen(req, inPhase("Cleanup"), obs({ greenReady: 3 }), ids);
    assert.equal(late.blueGreen, undefined, "too late to roll back once blue no longer votes");
    assert.equal(late.upgradeRequests?.lastHandledRollback, "r1");
    const handled = planBlueGreen(
      req,
      { ...inPhase("Promoting"), upgradeRequests: { lastHandledRollback: "r1" } },
      obs({ greenReady: 3 }, { greenJoined: true }),
      ids,
    );
    assert.deepEqual(
      handled.actions,
      [{ kind: "promote", side: "green" }],
      "a handled value is not acted on again",
    );
  });

  it("RollingBack gives blue its votes and leadership back, then → RollbackCleanup", () => {
    const st = inPhase("RollingBack", { rollbackReason: "x" });
    const greenLeads = {
      greenVoting: true,
      greenDemoted: false,
      blueVoting: false,
      blueDemoted: true,
      leaderOnGreen: true,
      leaderOnBlue: false,
    };
    const p = planBlueGreen(spec(), st, obs({ greenReady: 3 }, greenLeads), ids);
    assert.deepEqual(p.actions, [
      { kind: "promote", side: "blue" },
      { kind: "demote", side: "green" },
    ]);
    const blueVotes = { ...greenLeads, blueVoting: true, blueDemoted: false };
    const q = planBlueGreen(spec(), st, obs({ greenReady: 3 }, blueVotes), ids);
    assert.deepEqual(q.actions, [{ kind: "demote", side: "green" }, { kind: "stepDown" }]);
    const back = {
      ...blueVotes,
      greenDemoted: true,
      greenVoting: false,
      leaderOnGreen: false,
      leaderOnBlue: true,
    };
    assert.equal(phaseOf(planBlueGreen(spec(), st, obs({ greenReady: 3 }, back), ids)), "RollbackCleanup");
  });

  it("RollbackCleanup removes green, then Idle with blue kept and the reason recorded", () => {
    const st = inPhase("RollbackCleanup", {
      rollbackReason: "JoiningMesh: green cannot run",
      rollbackAttempt: 1,
    });
    const p = planBlueGreen(spec(), st, obs({}, { greenPresent: 2 }), ids);
    assert.deepEqual(p.actions, [{ kind: "remove", side: "green" }]);
    const done = planBlueGreen(spec(), st, obs({}, { greenPresent: 0 }), ids);
    assert.equal(done.rolledBack, true);
    assert.equal(phaseOf(done), "Idle");
    assert.equal(done.blueGreen?.blueImage, OLD);
    assert.equal(done.blueGreen?.greenRevision, undefined);
    assert.equal(done.blueGreen?.rollbackReason, "JoiningMesh: green cannot run");
  });

  it("a rolled-back version does not restart by itself; a new retry request restarts it once", () => {
    const st: PlanStatus = {
      currentVersion: "2.6.2",
      currentImage: OLD,
      blueGreen: { phase: "Idle", greenVersion: "2.7.2", rollbackReason: "bad image", blueImage: OLD },
    };
    const held = planBlueGreen(spec(), st, obs(), ids);
    assert.equal(held.blueGreen, undefined);
    assert.equal(held.condition?.reason, "UpgradeRollback");
    const retry = planBlueGreen(spec({ requests: { retry: "t1" } }), st, obs(), ids);
    assert.equal(phaseOf(retry), "DeployingGreen");
    assert.equal(retry.upgradeRequests?.lastHandledRetry, "t1");
    const other = planBlueGreen(spec({ version: "2.7.3", image: "openbao/openbao:2.7.3" }), st, obs(), ids);
    assert.equal(phaseOf(other), "DeployingGreen", "another version starts");
  });
});

describe("blue-green plan: break-glass", () => {
  const exhaustedRollback = (): PlanStatus => {
    const st = inPhase("RollingBack", { rollbackReason: "x" });
    return {
      ...st,
      blueGreen: { ...st.blueGreen!, jobFailureCount: 5, lastJobFailure: "promote blue: 500" },
    };
  };

  it("RollingBack that keeps failing enters break-glass with nonce, reason and steps", () => {
    const p = planBlueGreen(spec(), exhaustedRollback(), obs({ greenReady: 3 }, { blueVoting: false }), ids);
    assert.equal(p.breakGlass?.active, true);
    assert.equal(p.breakGlass?.nonce, "nonce-1");
    assert.equal(p.breakGlass?.reason, "RollbackConsensusRepairFailed");
    assert.deepEqual(p.breakGlass?.steps, [...BREAK_GLASS_STEPS]);
    assert.match(p.breakGlass?.message ?? "", /promote blue: 500/);
    assert.equal(p.condition?.reason, "BreakGlassRequired");
    assert.deepEqual(p.actions, []);
  });

  it("blue without a quorum of ready pods enters break-glass at once", () => {
    const st = inPhase("RollingBack", { rollbackReason: "x" });
    const p = planBlueGreen(spec(), st, obs({ blueReady: 1 }, { blueQuorum: false }), ids);
    assert.equal(p.breakGlass?.active, true);
  });

  it("blue without a ready majority while no member answers for Raft enters break-glass; one pod down waits", () => {
    const st = inPhase("RollingBack", { rollbackReason: "x" });
    const noLeader = planBlueGreen(spec(), st, obs({ blueReady: 1, raft: undefined }), ids);
    assert.equal(noLeader.breakGlass?.active, true);
    assert.equal(noLeader.condition?.reason, "BreakGlassRequired");
    const oneDown = planBlueGreen(spec(), st, obs({ blueReady: 2, raft: undefined }), ids);
    assert.equal(oneDown.breakGlass, undefined);
    assert.equal(phaseOf(oneDown), "RollingBack");
  });

  it("halts every phase until spec.breakGlassAck equals the nonce, then resumes with a fresh count", () => {
    const glass = { active: true, nonce: "nonce-1", reason: "RollbackConsensusRepairFailed" as const };
    const st: PlanStatus = { ...exhaustedRollback(), breakGlass: glass };
    const halted = planBlueGreen(spec({ requests: { rollback: "r9" } }), st, obs({ greenReady: 3 }), ids);
    assert.deepEqual(halted.actions, []);
    assert.equal(halted.blueGreen, undefined);
    assert.equal(halted.upgradeRequests, undefined, "requests wait too");
    assert.equal(halted.condition?.reason, "BreakGlassRequired");
    assert.equal(halted.halted, true, "the executor neither acts nor counts a halted pass");
    const wrong = planBlueGreen(spec({ breakGlassAck: "guess" }), st, obs({ greenReady: 3 }), ids);
    assert.deepEqual(wrong.actions, []);
    assert.equal(wrong.breakGlass, undefined);
    const ack = planBlueGreen(
      spec({ breakGlassAck: "nonce-1" }),
      st,
      obs({ greenReady: 3, now: later(5000) }),
      ids,
    );
    assert.equal(ack.breakGlass?.active, false);
    assert.equal(ack.breakGlass?.acknowledgedAt, later(5000).toISOString());
    assert.equal(ack.blueGreen?.jobFailureCount, 0);
    assert.equal(ack.blueGreen?.phase, "RollingBack");
    // The next pass, with break-glass inactive, acts again.
    const next = planBlueGreen(
      spec({ breakGlassAck: "nonce-1" }),
      { ...st, breakGlass: ack.breakGlass, blueGreen: ack.blueGreen },
      obs({ greenReady: 3 }, { blueVoting: false, greenVoting: true, greenDemoted: false }),
      ids,
    );
    assert.ok(next.actions.length > 0);
  });
});

describe("blue-green plan: resumes from status alone", () => {
  // Walk the whole forward path, each pass planned from a fresh copy of the persisted status only
  // (as a restarted operator would see it), and check every phase is reached in order.
  it("each pass needs only the status the previous one wrote", () => {
    const seen: string[] = [];
    let status: PlanStatus = { currentVersion: "2.6.2", currentImage: OLD };
    let raft: RaftView = { ...raftBefore };
    let greenReady = 0;
    for (let pass = 0; pass < 40; pass++) {
      const persisted: PlanStatus = JSON.parse(JSON.stringify(status));
      const p = planBlueGreen(spec(), persisted, obs({ greenReady, now: later(pass * 1000) }, raft), ids);
      if (p.blueGreen) status = { ...status, blueGreen: p.blueGreen };
      const phase = status.blueGreen?.phase ?? "Idle";
      if (seen.at(-1) !== phase) seen.push(phase);
      // The world reacts to what the plan asked for.
      if (phase === "DeployingGreen") greenReady = 3;
      if (phase === "JoiningMesh") raft = { ...raft, greenJoined: true, greenPresent: 3 };
      if (phase === "Syncing") raft = { ...raft, greenCaughtUp: true };
      for (const a of p.actions) {
        if (a.kind === "promote" && a.side === "green")
          raft = { ...raft, greenVoting: true, greenDemoted: false };
        if (a.kind === "demote" && a.side === "blue")
          raft = { ...raft, blueDemoted: !raft.leaderOnBlue, blueVoting: raft.leaderOnBlue };
        if (a.kind === "stepDown")
          raft = { ...raft, leaderOnBlue: false, leaderOnGreen: true, blueDemoted: true, blueVoting: false };
        if (a.kind === "remove" && a.side === "blue") raft = { ...raft, bluePresent: 0 };
      }
      if (p.completed) {
        status = { ...status, currentVersion: "2.7.2", currentImage: NEW };
        break;
      }
    }
    assert.deepEqual(seen, [
      "DeployingGreen",
      "JoiningMesh",
      "Syncing",
      "Promoting",
      "DemotingBlue",
      "Cleanup",
      "Idle",
    ]);
    assert.equal(status.currentVersion, "2.7.2");
    assert.deepEqual(
      planBlueGreen(spec(), status, obs({}, raft), ids),
      { actions: [] },
      "nothing left to do",
    );
  });

  it("a pass repeated with the same inputs gives the same plan (a restart mid-phase repeats, never skips)", () => {
    for (const phase of [
      "DeployingGreen",
      "JoiningMesh",
      "Syncing",
      "Promoting",
      "DemotingBlue",
      "Cleanup",
      "RollingBack",
      "RollbackCleanup",
    ] as const) {
      const o = obs({ greenReady: 3 }, { greenJoined: true, greenVoting: true });
      assert.deepEqual(
        planBlueGreen(spec(), inPhase(phase), o, ids),
        planBlueGreen(spec(), inPhase(phase), o, ids),
        phase,
      );
    }
  });

  it("a bad minSyncDuration is refused naming the field", () => {
    const s = spec({
      settings: { autoPromote: true, preUpgradeSnapshot: false, verification: { minSyncDuration: "soon" } },
    });
    assert.throws(
      () => planBlueGreen(s, inPhase("Syncing"), obs(), ids),
      /spec\.upgrade\.blueGreen\.verification\.minSyncDuration/,
    );
  });
});
