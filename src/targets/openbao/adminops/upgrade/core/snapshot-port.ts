/**
 * The pre-upgrade snapshot, as the upgrade managers see it. The snapshot module
 * (adminops/upgrade/snapshot, ensurePreUpgradeSnapshot) creates the Job once under a name derived
 * from the upgrade's id and reports its outcome; the managers only ask and wait. A narrow port keeps
 * the managers testable and the wiring the only place that knows the implementation.
 */
import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../../../apis/openbaocluster-names.js";

export interface SnapshotOutcome {
  state: "NotRequested" | "Running" | "Succeeded" | "Failed";
  jobName?: string;
  reason?: string;
  message?: string;
  /** While Running: why its pod cannot start (jobs/start-health.ts), shown in the condition. */
  notStarted?: string;
}

export interface PreUpgradeSnapshotOptions {
  /** Stable across restarts: the same upgrade asks again and finds the same Job. */
  upgradeId: string;
  signal?: AbortSignal;
}

export type PreUpgradeSnapshotPort = (
  cluster: OpenBaoCluster,
  opts: PreUpgradeSnapshotOptions,
) => Promise<SnapshotOutcome>;

/** Until a snapshot module is wired: a requested snapshot is refused, never silently skipped. */
export const noSnapshots: PreUpgradeSnapshotPort = async (cluster) =>
  cluster.spec.upgrade?.preUpgradeSnapshot
    ? {
        state: "Failed",
        reason: OpenBaoClusterReason.PreUpgradeBackupFailed,
        message:
          "spec.upgrade.preUpgradeSnapshot is set but this operator build has no pre-upgrade snapshot module",
      }
    : { state: "NotRequested" };
