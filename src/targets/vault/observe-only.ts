/** Observe-only mode: what a real pass would write, reported as drift instead of written. */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedReason as R } from "../../apis/vaultseed-names.js";
import type { KvState } from "./kv.js";
import { plannedChanges } from "./metrics.js";
import { outcomeOf } from "./outcome.js";
import { countByAction, PLAN_ACTIONS, summarizeChanges } from "./plan-summary.js";
import { type Plan, recordedRotationToken } from "./planner.js";
import type { Outcome } from "./seed-pass.js";
import { READY_MESSAGE, TARGET } from "./seed-pass.js";

export function observeOnly(obj: VaultSeed, p: Plan, current: KvState): Outcome {
  const labels = { target: TARGET, namespace: obj.metadata.namespace!, name: obj.metadata.name! };
  const counts = countByAction(p.changes);
  for (const action of PLAN_ACTIONS) plannedChanges.set({ ...labels, action }, counts.get(action) ?? 0);
  const drift = summarizeChanges(p.changes);
  const base = {
    kvVersion: current.version,
    rotationToken: recordedRotationToken(current.customMetadata),
    managedKeys: obj.status?.managedKeys,
  };
  if (p.outcome.kind !== "ok" && !(p.outcome.kind === "pending" && drift)) {
    const o = outcomeOf(p, current.version, current.customMetadata);
    return { ...o, managedKeys: base.managedKeys, verdict: { ...o.verdict, drift } };
  }
  if (drift)
    return {
      ...base,
      verdict: {
        ready: false,
        reason: R.ObserveOnly,
        message: `observe-only: a real run would write: ${drift}`,
        drift,
      },
    };
  return {
    ...base,
    verdict: { ready: true, reason: R.Reconciled, message: READY_MESSAGE, drift: "" },
  };
}
