/**
 * status.upgrade as the rolling upgrade keeps it between passes: its failed steps as the kernel's
 * attempt record, and the parts cleared as the roll moves on. Pure.
 */
import type { AttemptRecord } from "../../../../../runtime/stages-attempts.js";
import type { UpgradeStatus } from "../core/status.js";
import { heldPartition } from "./plan.js";

/** The kernel's name for a step of the roll: every failed step counts towards one give-up. */
export const STEP = "rolling-step";

/** status.upgrade's count of failed steps, as the kernel's attempt record. */
export function attemptsOf(u: UpgradeStatus | undefined): AttemptRecord | undefined {
  return u?.consecutiveFailures
    ? { stage: STEP, reason: u.lastErrorReason ?? "", attempts: u.consecutiveFailures }
    : undefined;
}

export function withoutLastError(u: UpgradeStatus): UpgradeStatus {
  const n = { ...u };
  delete n.lastErrorReason;
  delete n.lastErrorMessage;
  delete n.lastErrorAt;
  delete n.consecutiveFailures;
  return n;
}

/** The wait is over: the next one begins its own clock. */
export function withoutWait(u: UpgradeStatus): UpgradeStatus {
  const n = { ...u };
  delete n.waitingOn;
  delete n.waitingSince;
  return n;
}

/** A retried roll starts its waits and step-downs over. */
export function withoutAttempts(u: UpgradeStatus): UpgradeStatus {
  const n = withoutWait(u);
  delete n.stepDownOrdinal;
  delete n.stepDowns;
  return n;
}

export function progress(u: UpgradeStatus, replicas: number): string {
  const done = (u.completedPods ?? []).length;
  return `upgrading ${u.fromVersion} → ${u.targetVersion}, ${done}/${replicas} pods done, partition ${heldPartition(u, replicas)}`;
}
