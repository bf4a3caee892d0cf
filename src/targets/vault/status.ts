import {
  VaultSeedCondition as C,
  VaultSeedReason as R,
  type VaultSeedReasonType,
} from "../../apis/vaultseed-names.js";
import { type Condition, removeCondition, setCondition } from "../../runtime/conditions.js";

/** The verdict of one reconcile, from which every condition is derived. */
export interface Verdict {
  ready: boolean;
  reason: VaultSeedReasonType;
  /** Names keys, paths and counts; never values. */
  message: string;
  /** Waiting for something, retried with backoff. */
  reconciling?: boolean;
  /** Cannot go on as declared; checked again at each resync. */
  stalled?: boolean;
  /** Observe-only mode: the summary of what a real run would change ("" when nothing). */
  drift?: string;
}

/**
 * Ready always appears. Reconciling and Stalled appear only while true, as kstatus reads them.
 * Drifted appears only in observe-only mode, True when a real run would change something.
 */
export function conditionsFor(
  prev: readonly Condition[] | undefined,
  v: Verdict,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const g = generation;
  let list = setCondition(
    prev,
    {
      type: C.Ready,
      status: v.ready ? "True" : "False",
      reason: v.reason,
      message: v.message,
      observedGeneration: g,
    },
    now,
  );
  list = v.reconciling
    ? setCondition(
        list,
        { type: C.Reconciling, status: "True", reason: v.reason, message: v.message, observedGeneration: g },
        now,
      )
    : removeCondition(list, C.Reconciling);
  list = v.stalled
    ? setCondition(
        list,
        { type: C.Stalled, status: "True", reason: v.reason, message: v.message, observedGeneration: g },
        now,
      )
    : removeCondition(list, C.Stalled);
  if (v.drift === undefined) return removeCondition(list, C.Drifted);
  return setCondition(
    list,
    v.drift
      ? { type: C.Drifted, status: "True", reason: R.ObserveOnly, message: v.drift, observedGeneration: g }
      : {
          type: C.Drifted,
          status: "False",
          reason: R.ObserveOnly,
          message: "a real run would change nothing",
          observedGeneration: g,
        },
    now,
  );
}
