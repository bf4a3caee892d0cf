import { OpenBaoClusterReason } from "../../../../apis/openbaocluster-names.js";
import { collate } from "../../../../runtime/text-order.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { type ExecutorFailureReason, type ExecutorResult, parseResult } from "../../executor/result.js";
import { recordedStartFailure } from "./start-health.js";

/**
 * Where an executor Job stands, read from the Job's conditions and the executor's one-line result in
 * its pod's termination message. Pure. Shared by every flow that runs the executor (scheduled backup,
 * restore, pre-upgrade snapshot), so a result means the same thing whoever started the Job.
 */

/**
 * Why a Job failed: the executor's own word, or what the Job showed without one. A wire vocabulary,
 * not one kind's reasons: the restore reports it through its reason table (restore/defaults.ts), the
 * cluster's flows in messages, metrics and lastFailureReason.
 */
export type JobFailureReason = ExecutorFailureReason | "DeadlineExceeded" | "JobStartTimeout" | "JobMissing";

export type JobOutcome =
  | { state: "running" }
  | { state: "succeeded"; key?: string; size?: number; durationMs?: number }
  | { state: "failed"; reason: JobFailureReason; message: string };

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
    collate(b.metadata.creationTimestamp ?? "", a.metadata.creationTimestamp ?? ""),
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
  // Ended by the operator because its pod never started: the recorded reason, not DeadlineExceeded.
  const unstarted = recordedStartFailure(job);
  if (unstarted) return { state: "failed", ...unstarted };
  const why = failedCond?.reason ?? "JobFailed";
  return {
    state: "failed",
    reason:
      why === "DeadlineExceeded" ? OpenBaoClusterReason.DeadlineExceeded : OpenBaoClusterReason.Interrupted,
    message: `Job failed (${why}) before the executor reported a result${failedCond?.message ? `: ${failedCond.message}` : ""}`,
  };
}
