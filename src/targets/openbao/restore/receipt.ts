/**
 * The restore's receipt, `status.execution` (upstream 0.5's stages): what the controller has done
 * about its one Job, written before each step is taken, so a restarted operator knows whether it
 * may still create the Job or must never create it again.
 *
 *   Prepared              the Job is built and named; at most created suspended (no pod can run).
 *                         A restart may go on: it finds the suspended Job or creates it.
 *   Committed             the suspended Job exists and is the one (its uid recorded); it is resumed
 *                         next. From here on no Job is ever created again for this restore: a
 *                         committed Job that is gone was deleted, and a second restore must not run.
 *   Created               the Job runs (resumed; its uid recorded).
 *   TerminalObserved      its end was seen (Succeeded or Failed).
 *   FollowThroughComplete the pods were restarted after a successful restore.
 *   Unknown               a committed Job is gone before its end was seen: reported, not recreated.
 *
 * Pure; the reconciler writes what these return.
 */
import type { OpenBaoRestore, OpenBaoRestoreStatus } from "../../../apis/openbaorestore.js";
import {
  OpenBaoRestoreCondition as C,
  OpenBaoRestoreReason as R,
} from "../../../apis/openbaorestore-names.js";
import { type Condition, setCondition } from "../../../runtime/conditions.js";
import { isoSeconds } from "../../../runtime/utc-time.js";

export type Execution = NonNullable<OpenBaoRestoreStatus["execution"]>;
export type Stage = Execution["stage"];

/** Upstream's phase for a committed Job that vanished; the TypeScript phase type keeps to the others. */
export const PHASE_UNKNOWN = "Unknown" as unknown as NonNullable<OpenBaoRestoreStatus["phase"]>;

const COMMITTED: ReadonlySet<Stage> = new Set<Stage>([
  "Committed",
  "Created",
  "TerminalObserved",
  "FollowThroughComplete",
  "Unknown",
]);

/** True once the controller has committed to the Job: it is never created again. */
export const isCommitted = (e: Execution | undefined): boolean => e !== undefined && COMMITTED.has(e.stage);

const stamp = (d: Date) => isoSeconds(d);

/** One restore, one operation: the request's uid names it (a new request is a new operation). */
export const operationID = (r: OpenBaoRestore): string => `restore-${r.metadata.uid ?? r.metadata.name}`;

function withExecution(r: OpenBaoRestore, e: Execution): OpenBaoRestoreStatus {
  return { ...(r.status ?? {}), execution: e };
}

export function prepared(r: OpenBaoRestore, now: Date, jobName: string): OpenBaoRestoreStatus {
  return withExecution(r, {
    operationID: operationID(r),
    stage: "Prepared",
    jobName,
    preparedAt: stamp(now),
  });
}

export function committed(r: OpenBaoRestore, now: Date, jobUID?: string): OpenBaoRestoreStatus {
  const e = r.status!.execution!;
  return withExecution(r, {
    ...e,
    stage: "Committed",
    committedAt: stamp(now),
    ...(jobUID ? { jobUID } : {}),
  });
}

export function created(r: OpenBaoRestore, now: Date, jobUID: string | undefined): OpenBaoRestoreStatus {
  const e = r.status!.execution!;
  return withExecution(r, {
    ...e,
    stage: "Created",
    ...(jobUID ? { jobUID } : {}),
    createdAt: e.createdAt ?? stamp(now),
  });
}

/** The Job's end as seen; only moves forward (a later stage is kept). */
export function terminalObserved(
  s: OpenBaoRestoreStatus,
  now: Date,
  result: "Succeeded" | "Failed",
): OpenBaoRestoreStatus {
  const e = s.execution;
  if (!e || (e.stage !== "Created" && e.stage !== "Committed")) return s;
  return {
    ...s,
    execution: { ...e, stage: "TerminalObserved", terminalObservedAt: stamp(now), terminalResult: result },
  };
}

export function followThroughComplete(s: OpenBaoRestoreStatus, now: Date): OpenBaoRestoreStatus {
  const e = s.execution;
  if (!e || e.stage === "FollowThroughComplete") return s;
  return { ...s, execution: { ...e, stage: "FollowThroughComplete", followThroughCompletedAt: stamp(now) } };
}

/**
 * A committed Job is not there (deleted, or the operator stopped between committing and creating
 * it): phase Unknown, stage Unknown, reason JobMissing. Whether the snapshot was applied is not
 * known, so nothing is retried; a new OpenBaoRestore asks again.
 */
export function lost(r: OpenBaoRestore, now: Date, jobName: string): OpenBaoRestoreStatus {
  const prev = r.status ?? {};
  // A restore from before receipts has none: its Job counts as committed all the same.
  const e = prev.execution ?? { operationID: operationID(r), stage: "Created", jobName };
  const message = `restore Job ${jobName} was committed (stage ${e.stage}) and is gone before its end was seen; it is not created again, since the snapshot may or may not have been applied. Check the cluster's data, then create a new OpenBaoRestore if it is still needed`;
  let list: Condition[] = [...(prev.conditions ?? [])];
  list = setCondition(
    list,
    {
      type: C.RestoreComplete,
      status: "Unknown",
      reason: R.JobMissing,
      message,
      observedGeneration: r.metadata.generation,
    },
    now,
  );
  return {
    ...prev,
    phase: PHASE_UNKNOWN,
    message,
    observedGeneration: r.metadata.generation,
    conditions: list,
    completionTime: stamp(now),
    execution: { ...e, stage: "Unknown" },
  };
}
