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

export function forgetBackupMetrics(namespace: string, name: string): void {
  backupSize.remove({ namespace, name });
  backupLastSuccess.remove({ namespace, name });
}
