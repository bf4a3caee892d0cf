/**
 * Giving up after N attempts, for the pass kernel (stages.ts). A stage that fails with
 * `giveUpAfter: N` is retried with the runtime's backoff until it has failed N times in a row at that
 * stage; the N-th failure is final: terminal, Stalled, not retried until the object changes.
 *
 * The count must survive an operator restart, so it lives in the kind's status, not in memory: the
 * kind persists what `countAttempts` returns with the pass's status write, and hands the record it
 * read back on the next pass. The kernel knows no kind: the record is a plain value.
 */
import type { KindReason } from "./conditions.js";
import type { StagesOutcome } from "./stages.js";

/** Failed attempts in a row at one stage, as the kind keeps them in its status. */
export interface AttemptRecord {
  stage: string;
  reason: string;
  /** How many passes in a row failed at `stage`, this one included. */
  attempts: number;
  /** The object's generation when they were counted: a changed spec starts counting again. */
  generation?: number;
}

/**
 * The record to persist after a pass: a failure at the stage the record names (same generation)
 * counts one more; a failure elsewhere, or after the spec changed, starts at 1; any other outcome
 * clears it (undefined), since the pass got past the failure or stopped for another cause.
 */
export function countAttempts<R extends KindReason>(
  prev: AttemptRecord | undefined,
  outcome: StagesOutcome<unknown, R, unknown>,
  generation?: number,
): AttemptRecord | undefined {
  if (outcome.kind !== "fail") return undefined;
  const same = prev?.stage === outcome.stage && prev.generation === generation;
  return {
    stage: outcome.stage,
    reason: outcome.reason,
    attempts: same ? prev.attempts + 1 : 1,
    ...(generation !== undefined ? { generation } : {}),
  };
}

/**
 * The outcome with a failure that has used its attempts made final: `invalid` (terminal, Stalled)
 * with its reason kept and the count said in its message. Anything else is returned as it is.
 */
export function withGiveUp<C, R extends KindReason, D>(
  outcome: StagesOutcome<C, R, D>,
  record: AttemptRecord | undefined,
): StagesOutcome<C, R, D> {
  if (outcome.kind !== "fail" || outcome.giveUpAfter === undefined) return outcome;
  if (!record || record.stage !== outcome.stage || record.attempts < outcome.giveUpAfter) return outcome;
  return {
    kind: "invalid",
    stage: outcome.stage,
    reason: outcome.reason,
    message: `gave up after ${record.attempts} failed attempts: ${outcome.message}`,
    ...(outcome.detail !== undefined ? { detail: outcome.detail } : {}),
  };
}
