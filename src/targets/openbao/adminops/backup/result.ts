import type { OpenBaoClusterStatus } from "../../../../apis/openbaocluster.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { type ExecutorResult, parseResult } from "../../executor/contract.js";

/**
 * The terminal result of a backup Job and what it does to status.backup. Pure.
 *
 * The executor writes one JSON line to its termination message; the controller reads it from the
 * pod status, so the outcome (key, size, duration) reaches status without the controller touching a
 * byte of the snapshot.
 */

export type BackupStatus = NonNullable<OpenBaoClusterStatus["backup"]>;

export type JobOutcome =
  | { state: "running" }
  | { state: "succeeded"; key?: string; size?: number; durationMs?: number }
  | { state: "failed"; reason: string; message: string };

interface JobCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface ContainerStatus {
  name: string;
  state?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
}

/** Termination message of the executor container in the Job's pods (the newest that has one). */
export function terminationMessage(pods: readonly KubeObject[]): string | undefined {
  const sorted = [...pods].sort((a, b) =>
    (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""),
  );
  for (const pod of sorted) {
    const statuses = ((pod["status"] as { containerStatuses?: ContainerStatus[] } | undefined)
      ?.containerStatuses ?? []) as ContainerStatus[];
    const msg = statuses.find((s) => s.name === "executor")?.state?.terminated?.message;
    if (msg) return msg;
  }
  return undefined;
}

/**
 * Where a Job stands. A failed Job without the executor's line (pod killed, deadline exceeded,
 * evicted) is a failure named after the Job's own condition; a line saying ok=false wins over it.
 */
export function jobOutcome(job: KubeObject, pods: readonly KubeObject[]): JobOutcome {
  const st = (job["status"] ?? {}) as { conditions?: JobCondition[]; succeeded?: number; failed?: number };
  const conds = st.conditions ?? [];
  const complete = conds.some((c) => c.type === "Complete" && c.status === "True");
  const failedCond = conds.find((c) => c.type === "Failed" && c.status === "True");
  if (!complete && !failedCond) return { state: "running" };
  const result: ExecutorResult | undefined = parseResult(terminationMessage(pods));
  if (complete) {
    if (result && !result.ok) return { state: "failed", reason: result.reason, message: result.error };
    return {
      state: "succeeded",
      key: result?.ok ? result.key : undefined,
      size: result?.ok ? result.size : undefined,
      durationMs: result?.ok ? result.durationMs : undefined,
    };
  }
  if (result && !result.ok) return { state: "failed", reason: result.reason, message: result.error };
  const why = failedCond?.reason ?? "JobFailed";
  return {
    state: "failed",
    reason: why === "DeadlineExceeded" ? "DeadlineExceeded" : "Interrupted",
    message: `Job failed (${why}) before the executor reported a result${failedCond?.message ? `: ${failedCond.message}` : ""}`,
  };
}

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
    next.lastBackupTime = now.toISOString().replace(/\.\d{3}Z$/, "Z");
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
    next.lastFailureTime = now.toISOString().replace(/\.\d{3}Z$/, "Z");
  }
  return next;
}
