import { durationSeconds } from "../../../workload/autopilot/autopilot.js";
import type { BlueGreenSettings } from "./types.js";

/** spec.upgrade.blueGreen with upstream's defaults filled in. Pure. */
export interface ResolvedSettings {
  autoPromote: boolean;
  maxJobFailures: number;
  autoRollback: boolean;
  rollbackOnJobFailure: boolean;
  /** A failed pre-promotion hook rolls back (autoRollback.onValidationFailure). */
  rollbackOnValidationFailure: boolean;
  /** The pre-promotion hook asked for. */
  hook: boolean;
  minSyncMs: number;
  preUpgradeSnapshot: boolean;
}

export function resolveSettings(s: BlueGreenSettings | undefined): ResolvedSettings {
  const minSync = s?.verification?.minSyncDuration;
  const seconds = minSync === undefined ? 0 : durationSeconds(minSync);
  if (seconds === undefined)
    throw new Error(
      `spec.upgrade.blueGreen.verification.minSyncDuration: ${JSON.stringify(minSync)} is not a duration like "30s" or "5m"`,
    );
  return {
    autoPromote: s?.autoPromote ?? true,
    maxJobFailures: s?.maxJobFailures ?? 5,
    autoRollback: s?.autoRollback?.enabled ?? true,
    rollbackOnJobFailure: s?.autoRollback?.onJobFailure ?? true,
    rollbackOnValidationFailure: s?.autoRollback?.onValidationFailure ?? true,
    hook: s?.verification?.prePromotionHook !== undefined,
    minSyncMs: seconds * 1000,
    preUpgradeSnapshot: s?.preUpgradeSnapshot ?? false,
  };
}
