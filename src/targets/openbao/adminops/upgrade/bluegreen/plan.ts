import { OpenBaoClusterReason as Reason } from "../../../../../apis/openbaocluster-names.js";
import {
  breakGlassGate,
  failForward,
  planRollbackCleanup,
  planRollingBack,
  startRollback,
  stepFailureCheck,
  validationFailed,
} from "./plan-rollback.js";
import { advance, at, elapsedMs, inProgress, POLL_MS, VOTING, wait } from "./plan-shared.js";
import { type ResolvedSettings, resolveSettings } from "./settings.js";
import type {
  BlueGreenPhase,
  BlueGreenStatus,
  Observed,
  Plan,
  PlanSpec,
  PlanStatus,
  RaftAction,
  UpgradeRequestsStatus,
} from "./types.js";

/**
 * The blue-green state machine as one pure function of (spec, status, observed) → plan. Nothing is
 * remembered between passes except what the plan writes to status, so an operator restarted in any
 * phase computes the same next step from status alone.
 *
 * Forward: Idle → DeployingGreen → JoiningMesh → Syncing → Promoting → DemotingBlue → Cleanup → Idle.
 * Green joins as Raft non-voters, so until Promoting a failing green cannot cost blue its quorum;
 * failures up to Syncing go straight to RollbackCleanup (only non-voters to remove). Once green votes
 * (Promoting, DemotingBlue) a failure goes RollingBack → RollbackCleanup. Cleanup is past the point of
 * no return: green leads and blue no longer votes, so it keeps retrying. When RollingBack cannot get
 * blue back to a quorum, break-glass halts everything until spec.breakGlassAck echoes the nonce.
 */

/** How long green may take to become Ready or to join before the attempt counts as failed. */
export const PHASE_TIMEOUT_MS = 10 * 60_000;
export { BREAK_GLASS_STEPS } from "./plan-rollback.js";

import type { PlanIds } from "./plan-shared.js";

export type { PlanIds };

const EARLY: readonly BlueGreenPhase[] = ["DeployingGreen", "JoiningMesh", "Syncing"];

export function planBlueGreen(spec: PlanSpec, status: PlanStatus, obs: Observed, ids: PlanIds): Plan {
  const settings = resolveSettings(spec.settings);
  const bg: BlueGreenStatus = status.blueGreen ?? { phase: "Idle" };
  const phase: BlueGreenPhase = bg.phase ?? "Idle";
  const requests = status.upgradeRequests ?? {};

  const glass = status.breakGlass;
  if (glass?.active) return breakGlassGate(spec, glass, bg, obs);

  const rollback = newRequest(spec.requests.rollback, requests.lastHandledRollback);
  if (rollback !== undefined) {
    const handled = { ...requests, lastHandledRollback: rollback };
    if (EARLY.includes(phase) || VOTING.includes(phase))
      return { ...startRollback(bg, phase, obs, "rollback requested"), upgradeRequests: handled };
    return { actions: [], upgradeRequests: handled, requeueAfterMs: 0 };
  }

  switch (phase) {
    case "Idle":
      return planIdle(spec, status, obs, ids, settings, requests);
    case "DeployingGreen":
      return planDeploying(bg, obs, settings);
    case "JoiningMesh":
      return planJoining(bg, obs, settings);
    case "Syncing":
      return planSyncing(spec, bg, obs, settings, requests);
    case "Promoting":
      return planPromoting(bg, obs, settings);
    case "DemotingBlue":
      return planDemoting(bg, obs, settings);
    case "Cleanup":
      return planCleanup(bg, obs);
    case "RollingBack":
      return planRollingBack(bg, obs, settings, ids);
    case "RollbackCleanup":
      return planRollbackCleanup(bg, obs);
  }
}

/** The request value when it is set and differs from the last one handled. */
export function newRequest(value: string | undefined, handled: string | undefined): string | undefined {
  return value !== undefined && value !== "" && value !== handled ? value : undefined;
}

// ---------------------------------------------------------------- Idle

function planIdle(
  spec: PlanSpec,
  status: PlanStatus,
  obs: Observed,
  ids: PlanIds,
  settings: ResolvedSettings,
  requests: UpgradeRequestsStatus,
): Plan {
  const bg = status.blueGreen ?? {};
  // Once a blue-green attempt ended, blueImage says exactly what the serving set runs; the version
  // the workload controller observed lags behind a completed upgrade until it reads the new pods,
  // and must not start the same upgrade a second time meanwhile.
  const pending =
    bg.blueImage !== undefined
      ? spec.image !== bg.blueImage
      : spec.version !== status.currentVersion || spec.image !== status.currentImage;
  if (!pending) return { actions: [] };

  // A rolled-back attempt at this version does not start again by itself: the user asks with a retry
  // request (or changes the version).
  const retry = newRequest(spec.requests.retry, requests.lastHandledRetry);
  const rolledBackHere = bg.rollbackReason !== undefined && bg.greenVersion === spec.version;
  if (rolledBackHere && retry === undefined)
    return {
      actions: [],
      condition: {
        status: "False",
        reason: Reason.UpgradeRollback,
        message: `the upgrade to ${spec.version} was rolled back (${bg.rollbackReason}); set spec.upgrade.requests.retry to try again`,
      },
    };

  if (settings.preUpgradeSnapshot) {
    const snap = obs.snapshot?.state ?? "Running";
    if (snap === "Running")
      return {
        actions: [],
        condition: inProgress(
          obs.snapshot?.notStarted
            ? `waiting for the pre-upgrade snapshot: ${obs.snapshot.notStarted}`
            : "waiting for the pre-upgrade snapshot",
        ),
        requeueAfterMs: POLL_MS,
      };
    if (snap === "Failed")
      return {
        actions: [],
        condition: {
          status: "False",
          reason: Reason.PreUpgradeBackupFailed,
          message: `the pre-upgrade snapshot failed: ${obs.snapshot?.message ?? "no detail"}`,
        },
      };
  }

  const started: BlueGreenStatus = {
    phase: "DeployingGreen",
    operationID: ids.operationID,
    blueRevision: bg.blueRevision,
    greenRevision: ids.greenRevision,
    blueImage: status.currentImage,
    greenImage: spec.image,
    greenVersion: spec.version,
    blueReplicas: spec.replicas,
    greenReplicas: spec.replicas,
    manualPromotionRequired: !settings.autoPromote,
    startTime: at(obs),
    jobFailureCount: 0,
    preUpgradeSnapshotJobName: obs.snapshot?.jobName,
    rollbackAttempt: 0,
  };
  const message = `blue-green upgrade ${status.currentVersion ?? "?"} → ${spec.version} started: deploying green`;
  return {
    actions: [],
    blueGreen: started,
    upgradeRequests: retry !== undefined ? { ...requests, lastHandledRetry: retry } : undefined,
    condition: { status: "True", reason: Reason.UpgradeStarted, message },
    event: { type: "Normal", reason: Reason.UpgradeStarted, message },
    requeueAfterMs: 0,
  };
}

// ---------------------------------------------------------------- forward phases

function planDeploying(bg: BlueGreenStatus, obs: Observed, s: ResolvedSettings): Plan {
  if (obs.greenFailure)
    return failForward(bg, "DeployingGreen", obs, s, `green cannot run: ${obs.greenFailure}`);
  const want = bg.greenReplicas ?? 0;
  if (want > 0 && obs.greenReady >= want)
    return advance(bg, "JoiningMesh", obs, "green is ready; joining Raft as non-voters");
  if (elapsedMs(bg, obs) > PHASE_TIMEOUT_MS)
    return failForward(
      bg,
      "DeployingGreen",
      obs,
      s,
      `green had ${obs.greenReady}/${want} pods ready after ${PHASE_TIMEOUT_MS / 60_000} min`,
    );
  return wait(bg, `deploying green: ${obs.greenReady}/${want} pods ready`);
}

function planJoining(bg: BlueGreenStatus, obs: Observed, s: ResolvedSettings): Plan {
  if (obs.greenFailure)
    return failForward(bg, "JoiningMesh", obs, s, `green cannot run: ${obs.greenFailure}`);
  if (obs.raft?.greenJoined)
    return advance(bg, "Syncing", obs, "green joined Raft; waiting for it to catch up");
  if (elapsedMs(bg, obs) > PHASE_TIMEOUT_MS)
    return failForward(
      bg,
      "JoiningMesh",
      obs,
      s,
      `green did not join Raft within ${PHASE_TIMEOUT_MS / 60_000} min`,
    );
  return wait(bg, sealedGreen(obs) ?? "waiting for green to join Raft as non-voters");
}

/** Why green is not moving when some of its pods are sealed: they leave Raft until unsealed. */
function sealedGreen(obs: Observed): string | undefined {
  const sealed = obs.greenSealed ?? [];
  if (sealed.length === 0) return undefined;
  return `green pod${sealed.length === 1 ? "" : "s"} ${sealed.join(", ")} sealed: green cannot catch up until ${sealed.length === 1 ? "it is" : "they are"} unsealed`;
}

function planSyncing(
  spec: PlanSpec,
  bg: BlueGreenStatus,
  obs: Observed,
  s: ResolvedSettings,
  requests: UpgradeRequestsStatus,
): Plan {
  if (obs.greenFailure) return failForward(bg, "Syncing", obs, s, `green cannot run: ${obs.greenFailure}`);
  if (!obs.raft?.greenCaughtUp) return wait(bg, sealedGreen(obs) ?? "green is catching up with the Raft log");
  const heldMs = elapsedMs(bg, obs);
  if (heldMs < s.minSyncMs)
    return {
      ...wait(bg, "green caught up; holding for verification.minSyncDuration"),
      requeueAfterMs: Math.min(POLL_MS, s.minSyncMs - heldMs),
    };
  if (s.hook) {
    const hook = obs.hook;
    if (!hook || hook.state === "NotStarted")
      return { ...wait(bg, "green is in sync: running the pre-promotion hook"), startHook: true };
    if (hook.state === "Running")
      return wait(
        bg,
        hook.notStarted
          ? `pre-promotion hook: ${hook.notStarted}`
          : `pre-promotion hook Job ${hook.jobName} is running`,
      );
    if (hook.state === "Failed")
      return validationFailed(
        bg,
        obs,
        s,
        `pre-promotion hook Job ${hook.jobName} ${hook.message ?? "failed"}`,
      );
  }
  if (bg.manualPromotionRequired) {
    const promote = newRequest(spec.requests.promote, requests.lastHandledPromote);
    if (promote === undefined)
      return {
        actions: [],
        blueGreen: bg,
        condition: {
          status: "True",
          reason: Reason.UpgradePaused,
          message: "green is in sync; set spec.upgrade.requests.promote to promote it",
        },
      };
    return {
      ...advance(bg, "Promoting", obs, "promotion requested: green becomes voters"),
      upgradeRequests: { ...requests, lastHandledPromote: promote },
    };
  }
  return advance(bg, "Promoting", obs, "green is in sync: promoting it to voters");
}

function planPromoting(bg: BlueGreenStatus, obs: Observed, s: ResolvedSettings): Plan {
  const failed = stepFailureCheck(bg, "Promoting", obs, s);
  if (failed) return failed;
  if (obs.greenFailure) return failForward(bg, "Promoting", obs, s, `green cannot run: ${obs.greenFailure}`);
  if (!obs.raft) return wait(bg, "promoting green: waiting to read Raft");
  if (obs.raft.greenVoting)
    return advance(bg, "DemotingBlue", obs, "green votes; demoting blue and moving leadership to green");
  return wait(bg, "promoting green to voters", [{ kind: "promote", side: "green" }]);
}

function planDemoting(bg: BlueGreenStatus, obs: Observed, s: ResolvedSettings): Plan {
  const failed = stepFailureCheck(bg, "DemotingBlue", obs, s);
  if (failed) return failed;
  if (!obs.raft) return wait(bg, "demoting blue: waiting to read Raft");
  if (obs.raft.blueDemoted && obs.raft.leaderOnGreen)
    return advance(bg, "Cleanup", obs, "green leads and blue no longer votes; removing blue");
  const actions: RaftAction[] = [{ kind: "demote", side: "blue" }];
  // The active node keeps its vote until it steps down; Raft then elects an up-to-date green voter.
  // Only once blue's followers lost their vote, so Raft can only elect a green voter.
  if (obs.raft.leaderOnBlue && !obs.raft.leaderSideFollowersVote) actions.push({ kind: "stepDown" });
  return wait(bg, "demoting blue and moving leadership to green", actions);
}

function planCleanup(bg: BlueGreenStatus, obs: Observed): Plan {
  if (!obs.raft) return wait(bg, "cleanup: waiting to read Raft");
  if (obs.raft.bluePresent > 0)
    return wait(bg, `removing ${obs.raft.bluePresent} blue server(s) from Raft`, [
      { kind: "remove", side: "blue" },
    ]);
  const message = `blue-green upgrade to ${bg.greenVersion ?? "?"} complete`;
  const done: BlueGreenStatus = {
    phase: "Idle",
    operationID: bg.operationID,
    blueRevision: bg.greenRevision,
    blueImage: bg.greenImage,
    blueReplicas: bg.greenReplicas,
    startTime: at(obs),
  };
  return {
    actions: [],
    blueGreen: done,
    completed: true,
    condition: { status: "False", reason: Reason.UpgradeComplete, message },
    event: { type: "Normal", reason: Reason.UpgradeComplete, message },
  };
}
