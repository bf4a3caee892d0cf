import {
  VaultSeedCondition as C,
  VaultSeedReason as R,
  type VaultSeedReasonType,
} from "../../apis/vaultseed-names.js";
import { type Condition, removeCondition, setCondition } from "../../runtime/conditions.js";
import { applySettled, type Settled } from "../../runtime/stages-settle.js";

/** The verdict of one reconcile, from which every condition is derived. */
export interface Verdict {
  ready: boolean;
  reason: VaultSeedReasonType;
  /** Names keys, paths and counts; never values. */
  message: string;
  /** Waiting for something, retried with backoff (the Outcome's next is "wait"). */
  reconciling?: boolean;
  /** Cannot go on as declared; checked again at each resync (an invalid spec: at its next change). */
  stalled?: boolean;
  /** Observe-only mode: the summary of what a real run would change ("" when nothing). */
  drift?: string;
}

/**
 * The conditions of a pass: Ready, Reconciling and Stalled as the kernel settled them (Ready always;
 * Reconciling and Stalled only while true, as kstatus reads them), and Drifted, only in
 * observe-only mode, True when a real run would change something.
 */
export function conditionsFor(
  prev: readonly Condition[] | undefined,
  settled: Settled<VaultSeedReasonType>,
  v: Verdict,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const g = generation;
  const list = applySettled(prev, settled, now);
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
