import { OpenBaoClusterReason } from "../../apis/openbaocluster-names.js";
import { type Condition, removeCondition, setCondition } from "../../runtime/conditions.js";
import { type DriftChange, summarizeDrift } from "./drift.js";

export const DRIFTED = "Drifted";

/**
 * The observe-only report: Drifted True naming what a real run would change, False when nothing.
 * Its lastTransitionTime moves only when the answer flips, so a resync with the same drift writes
 * nothing.
 */
export function driftedCondition(
  conditions: readonly Condition[],
  changes: readonly DriftChange[],
  generation: number | undefined,
  now: Date,
): Condition[] {
  const summary = summarizeDrift(changes);
  return setCondition(
    conditions,
    {
      type: DRIFTED,
      status: summary ? "True" : "False",
      reason: OpenBaoClusterReason.ObserveOnly,
      message: summary ? `a real run would: ${summary}` : "a real run would change nothing",
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    },
    now,
  );
}

/** A real run reports no drift: the condition left by an earlier observe-only run goes. */
export function withoutDrifted(conditions: readonly Condition[]): Condition[] {
  return removeCondition(conditions, DRIFTED);
}
