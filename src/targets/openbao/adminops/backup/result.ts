import type { OpenBaoClusterStatus } from "../../../../apis/openbaocluster.js";
import { isoSeconds } from "../../../../runtime/utc-time.js";
import { type JobOutcome, jobOutcome, terminationMessage } from "../jobs/result.js";

// Job result reading moved to adminops/jobs/result.ts (the pre-upgrade snapshot reads it too).
export { type JobOutcome, jobOutcome, terminationMessage };

/**
 * The terminal result of a backup Job and what it does to status.backup. Pure.
 *
 * The executor writes one JSON line to its termination message; the controller reads it from the
 * pod status (jobs/result.ts), so the outcome (key, size, duration) reaches status without the
 * controller touching a byte of the snapshot.
 */

export type BackupStatus = NonNullable<OpenBaoClusterStatus["backup"]>;

/** "1m2.345s", Go's style, as upstream prints lastBackupDuration. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, ms) / 1000;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total - h * 3600 - m * 60;
  const sec = `${Number(s.toFixed(3))}s`;
  return `${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${sec}`;
}

/**
 * status.backup after a terminal result. Clears jobName in the same write that records the result,
 * so a pass that resumes after a crash finds no Job in flight and cannot record it twice. A failure
 * never touches lastBackupTime, lastBackupKey, lastBackupName or lastBackupSize.
 */
export function recordOutcome(
  prev: BackupStatus,
  outcome: Exclude<JobOutcome, { state: "running" }>,
  fallbackKey: string | undefined,
  startedAt: Date | undefined,
  now: Date,
): BackupStatus {
  const next: BackupStatus = { ...prev };
  delete next.jobName;
  if (outcome.state === "succeeded") {
    const key = outcome.key ?? fallbackKey;
    const durationMs = outcome.durationMs ?? (startedAt ? now.getTime() - startedAt.getTime() : undefined);
    next.lastBackupTime = isoSeconds(now);
    if (key) {
      next.lastBackupKey = key;
      next.lastBackupName = key.split("/").pop();
    }
    if (outcome.size !== undefined) next.lastBackupSize = outcome.size;
    if (durationMs !== undefined) next.lastBackupDuration = formatDuration(durationMs);
    next.consecutiveFailures = 0;
    delete next.lastFailureReason;
    delete next.lastFailureMessage;
    delete next.lastFailureTime;
  } else {
    next.consecutiveFailures = (prev.consecutiveFailures ?? 0) + 1;
    next.lastFailureReason = outcome.reason;
    next.lastFailureMessage = outcome.message.slice(0, 4000);
    next.lastFailureTime = isoSeconds(now);
  }
  return next;
}
