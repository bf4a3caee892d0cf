/**
 * The Upgrading condition and the upgrade's events. The condition goes through the AdminOps plane
 * (staged in the pass, or one fresh read and one conditional apply); an event is recorded only when the reason moves, so a
 * pass that waits says nothing new.
 */

import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import type { AdminOpsPass } from "../../../opslifecycle/index.js";
import { setPlaneCondition } from "../../../opslifecycle/plane-condition.js";

/** Upstream's reasons for the Upgrading condition, plus the refusals a pass can report. */
export const UpgradeReason = {
  Started: R.UpgradeStarted,
  InProgress: R.UpgradeInProgress,
  Complete: R.UpgradeComplete,
  Failed: R.UpgradeFailed,
  Paused: R.UpgradePaused,
  DowngradeBlocked: R.DowngradeBlocked,
  InvalidVersion: R.InvalidVersion,
  NoUpgradeNeeded: R.NoUpgradeNeeded,
  PreUpgradeBackupFailed: R.PreUpgradeBackupFailed,
  StepDownFailed: R.StepDownFailed,
  StepDownTimeout: R.StepDownTimeout,
  OperationLockHeld: R.OperationLockHeld,
  ClusterNotReady: R.ClusterNotReady,
  AuthenticationRequired: R.AuthenticationRequired,
} as const;

/** Reasons that are routine progress: no event each time they are set (the condition says it). */
const QUIET = new Set<OpenBaoClusterReasonType>([R.UpgradeInProgress, R.NoUpgradeNeeded]);
/** Reasons that are a refusal or a failure: a Warning event. */
const WARNING = new Set<OpenBaoClusterReasonType>([
  R.UpgradeFailed,
  R.DowngradeBlocked,
  R.InvalidVersion,
  R.InvalidSpec,
  R.PreUpgradeBackupFailed,
  R.StepDownFailed,
  R.StepDownTimeout,
]);

export interface UpgradingCondition {
  status: "True" | "False";
  reason: OpenBaoClusterReasonType;
  message: string;
}

/** Sets Upgrading when it moved; returns whether it wrote. */
export async function setUpgrading(
  to: KubeClient | AdminOpsPass,
  events: EventRecorder,
  cluster: OpenBaoCluster,
  c: UpgradingCondition,
  now: Date,
  signal?: AbortSignal,
): Promise<boolean> {
  const { moved, before } = await setPlaneCondition(to, cluster, { type: C.Upgrading, ...c }, now, signal);
  if (!moved) return false;
  if (before?.reason !== c.reason && !QUIET.has(c.reason))
    events.record(cluster, {
      type: WARNING.has(c.reason) ? "Warning" : "Normal",
      reason: c.reason,
      action: "Upgrade",
      note: c.message.slice(0, 1000),
    });
  return true;
}
