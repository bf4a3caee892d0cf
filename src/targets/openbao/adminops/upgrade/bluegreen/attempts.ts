/**
 * Blue-green's failed steps, counted and given up on by the pass kernel (runtime/stages-attempts.ts)
 * rather than by arithmetic of its own. The count lives where upstream keeps it,
 * status.blueGreen.jobFailureCount (with lastJobFailure), and is per phase: every phase starts at 0,
 * so the kernel's stage is the phase. Running out of attempts (spec maxJobFailures) is not a stop
 * here: the plan rolls back or holds, as upstream does. Pure.
 */
import { OpenBaoClusterReason as Reason } from "../../../../../apis/openbaocluster-names.js";
import { fail } from "../../../../../runtime/stages.js";
import { type AttemptRecord, countAttempts, withGiveUp } from "../../../../../runtime/stages-attempts.js";
import type { ResolvedSettings } from "./settings.js";
import type { BlueGreenStatus } from "./types.js";

/** A failed step of the phase `bg` is in, as the kernel's outcome. */
function stepFailed(bg: BlueGreenStatus, what: string, giveUpAfter?: number) {
  return {
    ...fail(Reason.HealthCheckFailed, what, {
      message: what,
      ...(giveUpAfter !== undefined ? { giveUpAfter: Math.max(1, giveUpAfter) } : {}),
    }),
    stage: bg.phase ?? "Idle",
  };
}

/** status.blueGreen's count as the kernel's attempt record. */
function attemptsOf(bg: BlueGreenStatus): AttemptRecord | undefined {
  return bg.jobFailureCount
    ? { stage: bg.phase ?? "Idle", reason: Reason.HealthCheckFailed, attempts: bg.jobFailureCount }
    : undefined;
}

/** Too many failed steps in this phase: maxJobFailures in a row. */
export function exhausted(bg: BlueGreenStatus, s: ResolvedSettings): boolean {
  const failed = stepFailed(bg, bg.lastJobFailure ?? "", s.maxJobFailures);
  return withGiveUp(failed, attemptsOf(bg)).kind === "invalid";
}

/** The status after a failed step, so maxJobFailures is counted across passes and restarts. */
export function recordStepFailure(bg: BlueGreenStatus, what: string): BlueGreenStatus {
  const record = countAttempts(attemptsOf(bg), stepFailed(bg, what));
  return { ...bg, jobFailureCount: record?.attempts ?? 1, lastJobFailure: what.slice(0, 250) };
}
