/**
 * The blue-green plan's way back: a failed attempt rolls back (or holds, as the settings say), a
 * rollback that cannot finish enters break-glass and waits for a person. Pure; plan.ts calls in.
 */
import {
  OpenBaoClusterReason,
  OpenBaoClusterReason as Reason,
} from "../../../../../apis/openbaocluster-names.js";
import { exhausted } from "./attempts.js";
import type { PlanIds } from "./plan-shared.js";
import { advance, at, enter, inProgress, VOTING, wait } from "./plan-shared.js";
import type { ResolvedSettings } from "./settings.js";
import type {
  BlueGreenPhase,
  BlueGreenStatus,
  BreakGlassStatus,
  Observed,
  Plan,
  PlanSpec,
  RaftAction,
} from "./types.js";

/** A failure before blue is demoted: roll back when allowed, else hold and say so. */
export function failForward(
  bg: BlueGreenStatus,
  phase: BlueGreenPhase,
  obs: Observed,
  s: ResolvedSettings,
  why: string,
): Plan {
  return rollBackOrHold(bg, phase, obs, why, s.autoRollback ? undefined : "automatic rollback is off");
}

/**
 * The pre-promotion hook failed: green never voted, so rolling back only removes it. Held instead
 * when autoRollback or its onValidationFailure is off (a rollback request or a new version moves on).
 */
export function validationFailed(bg: BlueGreenStatus, obs: Observed, s: ResolvedSettings, why: string): Plan {
  const allowed = s.autoRollback && s.rollbackOnValidationFailure;
  return rollBackOrHold(
    bg,
    "Syncing",
    obs,
    why,
    allowed ? undefined : "automatic rollback on validation failure is off",
  );
}

/** Rolls back, or, when `heldBecause` says why it may not, holds with UpgradeFailed. */
export function rollBackOrHold(
  bg: BlueGreenStatus,
  phase: BlueGreenPhase,
  obs: Observed,
  why: string,
  heldBecause: string | undefined,
): Plan {
  if (heldBecause === undefined) return startRollback(bg, phase, obs, why);
  return {
    actions: [],
    blueGreen: bg,
    condition: {
      status: "False",
      reason: Reason.UpgradeFailed,
      message: `${phase}: ${why}; ${heldBecause}, set spec.upgrade.requests.rollback to roll back`,
    },
    event: { type: "Warning", reason: Reason.UpgradeFailed, message: `${phase}: ${why}` },
  };
}

export function stepFailureCheck(
  bg: BlueGreenStatus,
  phase: BlueGreenPhase,
  obs: Observed,
  s: ResolvedSettings,
) {
  if (!exhausted(bg, s)) return undefined;
  const why = `${bg.jobFailureCount} consecutive failed steps (last: ${bg.lastJobFailure ?? "unknown"})`;
  if (!s.rollbackOnJobFailure)
    return {
      actions: [],
      blueGreen: bg,
      condition: { status: "False", reason: Reason.UpgradeFailed, message: `${phase}: ${why}` },
    } satisfies Plan;
  return failForward(bg, phase, obs, s, why);
}

// ---------------------------------------------------------------- rollback

export function startRollback(bg: BlueGreenStatus, phase: BlueGreenPhase, obs: Observed, why: string): Plan {
  // Non-voting green only needs removing; once green voted, blue must take its votes back first.
  const next: BlueGreenPhase = VOTING.includes(phase) ? "RollingBack" : "RollbackCleanup";
  const message = `${phase}: ${why}; rolling back to ${bg.blueImage ?? "blue"}`;
  return {
    actions: [],
    blueGreen: {
      ...enter(bg, next, obs),
      rollbackReason: `${phase}: ${why}`.slice(0, 250),
      rollbackStartTime: at(obs),
      rollbackAttempt: (bg.rollbackAttempt ?? 0) + 1,
    },
    condition: { status: "True", reason: Reason.UpgradeRollback, message },
    event: { type: "Warning", reason: Reason.UpgradeRollback, message },
    requeueAfterMs: 0,
  };
}

export function planRollingBack(bg: BlueGreenStatus, obs: Observed, s: ResolvedSettings, ids: PlanIds): Plan {
  // Blue without a ready majority cannot take its votes back: no quorum within blue, or none at all
  // (no member answers for Raft, so no leader). Waiting would not bring it back; a person must.
  const blueMajorityDown = obs.blueReady * 2 <= (bg.blueReplicas ?? 0);
  if (exhausted(bg, s) || (blueMajorityDown && (obs.raft === undefined || !obs.raft.blueQuorum)))
    return enterBreakGlass(bg, obs, ids);
  if (!obs.raft) return wait(bg, "rolling back: waiting to read Raft");
  const r = obs.raft;
  if (r.blueVoting && r.leaderOnBlue && r.greenDemoted)
    return advance(bg, "RollbackCleanup", obs, "blue votes and leads again; removing green");
  const actions: RaftAction[] = [];
  if (!r.blueVoting) actions.push({ kind: "promote", side: "blue" });
  if (!r.greenDemoted) actions.push({ kind: "demote", side: "green" });
  if (r.blueVoting && r.leaderOnGreen && !r.leaderSideFollowersVote) actions.push({ kind: "stepDown" });
  return wait(bg, "rolling back: blue takes its votes and leadership back", actions);
}

export function planRollbackCleanup(bg: BlueGreenStatus, obs: Observed): Plan {
  if (!obs.raft) return wait(bg, "rollback cleanup: waiting to read Raft");
  if (obs.raft.greenPresent > 0)
    return wait(bg, `removing ${obs.raft.greenPresent} green server(s) from Raft`, [
      { kind: "remove", side: "green" },
    ]);
  const message = `rolled back to ${bg.blueImage ?? "blue"}: ${bg.rollbackReason ?? "no reason recorded"}`;
  return {
    actions: [],
    blueGreen: {
      phase: "Idle",
      operationID: bg.operationID,
      blueRevision: bg.blueRevision,
      blueImage: bg.blueImage,
      blueReplicas: bg.blueReplicas,
      greenVersion: bg.greenVersion,
      rollbackReason: bg.rollbackReason,
      rollbackStartTime: bg.rollbackStartTime,
      rollbackAttempt: bg.rollbackAttempt,
      startTime: at(obs),
    },
    rolledBack: true,
    condition: { status: "False", reason: Reason.UpgradeRollback, message },
    event: { type: "Warning", reason: Reason.UpgradeRollback, message },
  };
}

// ---------------------------------------------------------------- break-glass

export const BREAK_GLASS_STEPS = [
  "Read status.breakGlass.message and the OpenBao pod logs; find which servers still hold the Raft data.",
  "Check membership: bao operator raft list-peers (and sys/storage/raft/autopilot/state) on a reachable pod.",
  "If no quorum can form, recover Raft by hand with a peers.json on the surviving servers (OpenBao's outage recovery).",
  "Once one revision holds a healthy quorum and a leader, copy status.breakGlass.nonce into spec.breakGlassAck.",
] as const;

export function enterBreakGlass(bg: BlueGreenStatus, obs: Observed, ids: PlanIds): Plan {
  const message =
    `rollback could not give blue back a healthy Raft quorum (${obs.blueReady}/${bg.blueReplicas ?? "?"} blue pods ready, ` +
    `${bg.jobFailureCount ?? 0} failed steps; last: ${bg.lastJobFailure ?? "none"}); automation is halted`;
  const glass: BreakGlassStatus = {
    active: true,
    reason: OpenBaoClusterReason.RollbackConsensusRepairFailed,
    message,
    nonce: ids.nonce,
    enteredAt: at(obs),
    steps: [...BREAK_GLASS_STEPS],
  };
  return {
    actions: [],
    blueGreen: bg,
    breakGlass: glass,
    condition: { status: "False", reason: Reason.BreakGlassRequired, message },
    event: { type: "Warning", reason: Reason.BreakGlassRequired, message },
  };
}

export function breakGlassGate(
  spec: PlanSpec,
  glass: BreakGlassStatus,
  bg: BlueGreenStatus,
  obs: Observed,
): Plan {
  if (spec.breakGlassAck === undefined || spec.breakGlassAck !== glass.nonce)
    return {
      actions: [],
      halted: true,
      condition: {
        status: "False",
        reason: Reason.BreakGlassRequired,
        message: `break-glass: automation halted until spec.breakGlassAck is set to status.breakGlass.nonce`,
      },
    };
  // Acknowledged: the failure count starts over so the phase gets a fresh set of attempts.
  const message = "break-glass acknowledged; automation resumes";
  return {
    actions: [],
    halted: true,
    breakGlass: { ...glass, active: false, acknowledgedAt: at(obs) },
    blueGreen: { ...bg, jobFailureCount: 0, lastJobFailure: undefined },
    condition: inProgress(message),
    event: { type: "Normal", reason: Reason.UpgradeInProgress, message },
    requeueAfterMs: 0,
  };
}
