/**
 * From a pass's outcome (stages.ts) to what the runtime and the status make of it, in one place:
 * the kstatus conditions (Ready always; Reconciling while the controller is making progress or
 * retrying; Stalled while it needs something from outside) and the ReconcileResult.
 */
import {
  type Condition,
  type ConditionInput,
  type KindReason,
  removeCondition,
  setCondition,
} from "./conditions.js";
import { deferUntil, type ReconcileResult, requeueAfter, retry, terminal } from "./controller.js";
import type { StageDefer, StageStop, StagesOutcome } from "./stages.js";

/** When a pass is looked at again when nothing else says. */
export interface NextPassOptions {
  /** After a pass that ran every stage: the resync; undefined means nothing until the next change. */
  doneAfterMs?: number | undefined;
  /** After a wait that named no delay. */
  waitAfterMs: number;
}

export interface SettleOptions<R extends KindReason> extends NextPassOptions {
  /** Ready=True when every stage ran. */
  readyReason: R;
  readyMessage: string;
  generation?: number | undefined;
  /** The condition types, when a kind names them otherwise. */
  types?: { ready: string; reconciling: string; stalled: string };
}

export interface Settled<R extends KindReason> {
  /** Conditions to set. */
  conditions: ConditionInput<R>[];
  /** Condition types to remove. */
  absent: string[];
  result: ReconcileResult;
}

/**
 * The reconcile result alone, for a kind whose conditions are its own: done → requeue after
 * `doneAfterMs`; wait → requeue after its delay; fail → the runtime's failure backoff, counted as
 * an error; invalid → terminal, not retried until the object changes; defer → the runtime runs the
 * key again when what it waits for settles. A pass that is not a list of stages (an AdminOps
 * half) hands its own stop, or `{ kind: "done" }`, the same way.
 */
export function stageResult<C, R extends KindReason, D, X extends StageDefer = never>(
  outcome: StagesOutcome<C, R, D, X> | { kind: "done" } | StageStop<R, D>,
  opts: NextPassOptions,
): ReconcileResult {
  switch (outcome.kind) {
    case "defer":
      return deferUntil(outcome.until, outcome.boundMs);
    case "done":
      return opts.doneAfterMs === undefined ? undefined : requeueAfter(opts.doneAfterMs);
    case "wait":
      return requeueAfter(outcome.afterMs ?? opts.waitAfterMs);
    case "fail":
      return retry(outcome.reason);
    case "invalid":
      return terminal(outcome.reason);
  }
}

/**
 * done → Ready=True, requeue after `doneAfterMs`; wait → Ready=False (and Reconciling or Stalled
 * by who it waits on), requeue after its delay; fail → Ready=False and Reconciling (it is retried),
 * the runtime's failure backoff, counted as an error; invalid → Ready=False and Stalled, a terminal
 * result: not retried until the object changes.
 */
export function settleStages<C, R extends KindReason, D>(
  outcome: StagesOutcome<C, R, D>,
  opts: SettleOptions<R>,
): Settled<R> {
  const t = opts.types ?? { ready: "Ready", reconciling: "Reconciling", stalled: "Stalled" };
  const g = opts.generation === undefined ? {} : { observedGeneration: opts.generation };
  if (outcome.kind === "done") {
    return {
      conditions: [
        { type: t.ready, status: "True", reason: opts.readyReason, message: opts.readyMessage, ...g },
      ],
      absent: [t.reconciling, t.stalled],
      result: stageResult(outcome, opts),
    };
  }
  const { reason, message } = outcome;
  const not = (type: string): ConditionInput<R> => ({ type, status: "False", reason, message, ...g });
  const yes = (type: string): ConditionInput<R> => ({ type, status: "True", reason, message, ...g });
  switch (outcome.kind) {
    case "wait": {
      const by = outcome.by ?? "progress";
      const shown = by === "progress" ? t.reconciling : by === "stalled" ? t.stalled : undefined;
      return {
        conditions: shown ? [not(t.ready), yes(shown)] : [not(t.ready)],
        absent: [t.reconciling, t.stalled].filter((x) => x !== shown),
        result: stageResult(outcome, opts),
      };
    }
    case "fail":
      return {
        conditions: [not(t.ready), yes(t.reconciling)],
        absent: [t.stalled],
        result: stageResult(outcome, opts),
      };
    case "invalid":
      return {
        conditions: [not(t.ready), yes(t.stalled)],
        absent: [t.reconciling],
        result: terminal(reason),
      };
  }
}

/** The list with the settled conditions set and the absent ones removed. */
export function applySettled<R extends KindReason>(
  prev: readonly Condition[] | undefined,
  settled: Settled<R>,
  now: Date,
): Condition[] {
  let list = [...(prev ?? [])];
  for (const type of settled.absent) list = removeCondition(list, type);
  for (const c of settled.conditions) list = setCondition(list, c, now);
  return list;
}
