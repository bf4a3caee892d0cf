import { Gauge, Histogram } from "prom-client";
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoMetric as M } from "../../../apis/openbaocluster-names.js";
import { registry } from "../../../runtime/metrics.js";

// Restore tests (spec.backup.restoreTest). Shown from status.backup on every pass, so a restarted
// operator exports what was recorded before it started.

const labelNames = ["namespace", "name"] as const;

export const lastVerified = new Gauge({
  name: M.BackupLastVerifiedTimestampSeconds,
  help: "When the last restore test that passed ended (Unix seconds); absent before the first.",
  labelNames,
  registers: [registry],
});

export const verificationFailed = new Gauge({
  name: M.BackupVerificationFailed,
  help: "1 when the last restore test failed, 0 when it passed; absent before the first.",
  labelNames,
  registers: [registry],
});

export const restoreTestInterval = new Gauge({
  name: M.BackupRestoreTestIntervalSeconds,
  help: "Seconds between two windows of spec.backup.restoreTest.schedule (the backup schedule's without one): the alert's unit.",
  labelNames,
  registers: [registry],
});

export const restoreTestDuration = new Histogram({
  name: M.BackupRestoreTestDurationSeconds,
  help: "Time from a restore test's start to its recorded outcome, by outcome.",
  labelNames: [...labelNames, "outcome"] as const,
  buckets: [60, 120, 300, 600, 900, 1800, 3600],
  registers: [registry],
});

/** The gauges from what status.backup holds. */
export function showVerification(c: OpenBaoCluster, intervalSeconds: number | undefined): void {
  const l = { namespace: c.metadata.namespace!, name: c.metadata.name! };
  const b = c.status?.backup;
  if (b?.lastVerifiedTime) lastVerified.set(l, Date.parse(b.lastVerifiedTime) / 1000);
  else lastVerified.remove(l);
  if (b?.lastVerificationTime) verificationFailed.set(l, b.lastVerificationFailureReason ? 1 : 0);
  else verificationFailed.remove(l);
  if (intervalSeconds !== undefined) restoreTestInterval.set(l, intervalSeconds);
  else restoreTestInterval.remove(l);
}

export function forgetVerification(namespace: string, name: string): void {
  for (const g of [lastVerified, verificationFailed, restoreTestInterval]) g.remove({ namespace, name });
}
