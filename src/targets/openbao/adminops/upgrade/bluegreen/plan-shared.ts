/**
 * What the blue-green plan's phases share (plan.ts forward, plan-rollback.ts backward): entering a
 * phase, waiting in one, the condition they say. Pure.
 */
import { OpenBaoClusterReason as Reason } from "../../../../../apis/openbaocluster-names.js";
import { isoTime } from "../../../../../runtime/utc-time.js";
import type { BlueGreenPhase, BlueGreenStatus, Observed, Plan, RaftAction } from "./types.js";

/** Poll interval while waiting on pods or Raft. */
export const POLL_MS = 5_000;

export interface PlanIds {
  /** A fresh id for a new attempt (used only when one starts). */
  operationID: string;
  /** The green revision name for a new attempt. */
  greenRevision: string;
  /** A fresh nonce, used only when break-glass is entered. */
  nonce: string;
}

/** The phases in which green votes. */
export const VOTING: readonly BlueGreenPhase[] = ["Promoting", "DemotingBlue"];

export function at(obs: Observed): string {
  return isoTime(obs.now);
}

export function enter(bg: BlueGreenStatus, phase: BlueGreenPhase, obs: Observed): BlueGreenStatus {
  return { ...bg, phase, startTime: at(obs), jobFailureCount: 0, lastJobFailure: undefined };
}

export function inProgress(message: string): Plan["condition"] {
  return { status: "True", reason: Reason.UpgradeInProgress, message };
}

export function wait(bg: BlueGreenStatus, message: string, actions: RaftAction[] = []): Plan {
  return { actions, condition: inProgress(message), requeueAfterMs: POLL_MS, blueGreen: bg };
}

export function advance(bg: BlueGreenStatus, phase: BlueGreenPhase, obs: Observed, message: string): Plan {
  return {
    actions: [],
    blueGreen: enter(bg, phase, obs),
    condition: inProgress(message),
    event: { type: "Normal", reason: Reason.UpgradeInProgress, message },
    requeueAfterMs: 0,
  };
}

export function elapsedMs(bg: BlueGreenStatus, obs: Observed): number {
  return bg.startTime ? obs.now.getTime() - Date.parse(bg.startTime) : 0;
}
