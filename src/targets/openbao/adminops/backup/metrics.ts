import { Counter, Gauge, Histogram } from "prom-client";
import { OpenBaoMetric as M } from "../../../../apis/openbaocluster-names.js";
import { registry } from "../../../../runtime/metrics.js";

// Upstream's backup metric names, so its dashboards and alerts keep working. Counted once per
// terminal result (the same pass that records it in status.backup), never per reconcile.

const labelNames = ["namespace", "name"] as const;

export const backupTotal = new Counter({
  name: M.BackupTotal,
  help: "Backup attempts that reached a terminal result.",
  labelNames,
  registers: [registry],
});

export const backupSuccessTotal = new Counter({
  name: M.BackupSuccessTotal,
  help: "Backups that uploaded a snapshot.",
  labelNames,
  registers: [registry],
});

export const backupFailureTotal = new Counter({
  name: M.BackupFailureTotal,
  help: "Backups that failed, by reason.",
  labelNames: [...labelNames, "reason"] as const,
  registers: [registry],
});

export const backupDuration = new Histogram({
  name: M.BackupDurationSeconds,
  help: "Time from snapshot start to upload completion, for successful backups.",
  labelNames,
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
  registers: [registry],
});

export const backupSize = new Gauge({
  name: M.BackupSizeBytes,
  help: "Bytes in the last successful snapshot.",
  labelNames,
  registers: [registry],
});

export const backupLastSuccess = new Gauge({
  name: M.BackupLastSuccessTimestamp,
  help: "Unix time of the last successful backup.",
  labelNames,
  registers: [registry],
});

export const backupRetentionDeleted = new Counter({
  name: "openbao_backup_retention_deleted_total",
  help: "Snapshots deleted by retention (spec.backup.retention).",
  labelNames,
  registers: [registry],
});

// Upstream's gauges of the last attempt, which its alerts read ("backups failing in a row").
// Set from status.backup on every pass, so they are right again right after a restart.

export const backupConsecutiveFailures = new Gauge({
  name: M.BackupConsecutiveFailures,
  help: "Backups that failed in a row since the last success (status.backup.consecutiveFailures).",
  labelNames,
  registers: [registry],
});

export const backupInProgress = new Gauge({
  name: M.BackupInProgress,
  help: "1 while a backup Job of the cluster runs, else 0.",
  labelNames,
  registers: [registry],
});

export const backupLastDuration = new Gauge({
  name: M.BackupLastDurationSeconds,
  help: "Seconds the last successful backup took (status.backup.lastBackupDuration).",
  labelNames,
  registers: [registry],
});

export const backupLastSize = new Gauge({
  name: M.BackupLastSizeBytes,
  help: "Bytes in the last successful snapshot (status.backup.lastBackupSize).",
  labelNames,
  registers: [registry],
});

/** The gauges above as status.backup says; a cluster without spec.backup has none. */
export function showBackupStatus(
  labels: { namespace: string; name: string },
  backup:
    | { jobName?: string; consecutiveFailures?: number; lastBackupSize?: number; lastBackupDuration?: string }
    | undefined,
  lastDurationSeconds: number | undefined,
): void {
  backupConsecutiveFailures.set(labels, backup?.consecutiveFailures ?? 0);
  backupInProgress.set(labels, backup?.jobName ? 1 : 0);
  if (backup?.lastBackupSize !== undefined) {
    backupLastSize.set(labels, backup.lastBackupSize);
    backupSize.set(labels, backup.lastBackupSize);
  }
  if (lastDurationSeconds !== undefined) backupLastDuration.set(labels, lastDurationSeconds);
}

export function forgetBackupMetrics(namespace: string, name: string): void {
  for (const g of [
    backupSize,
    backupLastSuccess,
    backupConsecutiveFailures,
    backupInProgress,
    backupLastDuration,
    backupLastSize,
  ])
    g.remove({ namespace, name });
}
