import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { TriggerBackupAnnotation } from "../../../../apis/openbaocluster-names.js";
import type { DriftChange } from "../../drift.js";
import { backupJobName, decide, ScheduleError } from "./schedule.js";

/**
 * Observe-only runs no backup controller: it would create a Job and take the operation lock, and a
 * Job has no dry run. What it would start is instead one entry of the Drifted report, decided by the
 * same pure schedule the controller uses: "1 backup (Job/<name>)" when a window or a new trigger is
 * due on an initialized cluster. Pure; the workload pass adds the entry to its changes.
 */
export function plannedBackup(cluster: OpenBaoCluster, now: Date): DriftChange | undefined {
  const spec = cluster.spec.backup;
  const status = cluster.status;
  // A real run would report ClusterNotReady (or nothing, when paused) and start no Job either.
  if (!spec || cluster.spec.paused || status?.initialized !== true) return undefined;
  // A Job left in flight by an earlier real run is watched, not started again.
  if (status.backup?.jobName) return undefined;
  try {
    const { due } = decide({
      schedule: spec.schedule,
      now,
      lastAttemptScheduledTime: status.backup?.lastAttemptScheduledTime,
      createdAt: cluster.metadata.creationTimestamp,
      trigger: cluster.metadata.annotations?.[TriggerBackupAnnotation],
      lastHandledTrigger: status.backup?.lastHandledManualTrigger,
    });
    return due ? { action: "backup", what: `Job/${backupJobName(cluster.metadata.name!, due)}` } : undefined;
  } catch (e) {
    // An invalid schedule starts nothing; the real controller names the field.
    if (e instanceof ScheduleError) return undefined;
    throw e;
  }
}
