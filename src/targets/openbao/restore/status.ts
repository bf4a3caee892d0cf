/**
 * OpenBaoRestore status transitions, pure. One function per thing that happens; each returns the
 * whole next status (the restore controller is its only writer).
 */

import type {
  OpenBaoRestore,
  OpenBaoRestorePhase,
  OpenBaoRestoreStatus,
} from "../../../apis/openbaorestore.js";
import {
  OpenBaoRestoreCondition as C,
  OpenBaoRestoreReason,
  type OpenBaoRestoreReasonType,
  OpenBaoRestoreReason as R,
} from "../../../apis/openbaorestore-names.js";
import { type Condition, type ConditionInput, setCondition } from "../../../runtime/conditions.js";
import { isoSeconds } from "../../../runtime/utc-time.js";
import type { RestoreReadiness } from "../readiness/restore.js";

/** A condition of an OpenBaoRestore: only its kind's reasons. */
type RestoreCondition = Omit<ConditionInput<OpenBaoRestoreReasonType>, "observedGeneration">;

const stamp = (d: Date) => isoSeconds(d);

/**
 * Completion means the restore workflow finished, not that OpenBao serves again: after a Raft
 * snapshot restore the cluster may need its pods unsealed or restarted. Said in every terminal status.
 */
export const FOLLOW_UP =
  "follow-up: check the OpenBaoCluster's OpenBaoSealed and Available conditions; pods may need to be unsealed or restarted before clients are served";

export const isTerminal = (p: OpenBaoRestorePhase | undefined): boolean =>
  // Unknown (upstream 0.5): a committed Job vanished; reported once, never retried.
  p === "Completed" || p === "Failed" || (p as string | undefined) === "Unknown";

function put(
  r: OpenBaoRestore,
  now: Date,
  phase: OpenBaoRestorePhase,
  message: string,
  conds: RestoreCondition[],
): OpenBaoRestoreStatus {
  const prev = r.status ?? {};
  let list: Condition[] = [...(prev.conditions ?? [])];
  for (const c of conds) list = setCondition(list, { ...c, observedGeneration: r.metadata.generation }, now);
  return {
    ...prev,
    phase,
    message: message.slice(0, 4096),
    observedGeneration: r.metadata.generation,
    conditions: list,
  };
}

/**
 * RestoreConfigurationReady as this pass evaluated it, on the status the pass goes on from: the
 * pass's next write carries it, so it costs no write of its own. Set while the request is validated
 * and kept as last evaluated once its Job is committed, as upstream.
 */
export function withConfiguration(r: OpenBaoRestore, now: Date, c: RestoreReadiness): OpenBaoRestore {
  const prev = r.status ?? {};
  const conditions = setCondition(
    [...(prev.conditions ?? [])],
    { type: C.RestoreConfigurationReady, ...c, observedGeneration: r.metadata.generation },
    now,
  );
  return { ...r, status: { ...prev, conditions } };
}

export function validating(
  r: OpenBaoRestore,
  now: Date,
  reason: OpenBaoRestoreReasonType,
  message: string,
): OpenBaoRestoreStatus {
  return put(r, now, "Validating", message, [{ type: C.Validated, status: "False", reason, message }]);
}

export function lockWait(r: OpenBaoRestore, now: Date, message: string): OpenBaoRestoreStatus {
  return put(r, now, "Validating", message, [
    {
      type: C.Validated,
      status: "True",
      reason: R.ValidationSucceeded,
      message: "target, snapshot and credentials checked",
    },
    { type: C.LockAcquired, status: "False", reason: R.OperationLockHeld, message },
  ]);
}

export interface RunningInput {
  jobName: string;
  size?: number;
  /** Text of the takeover when overrideOperationLock took the lock from another holder. */
  overridden?: string;
  forced: string[];
}

export function running(r: OpenBaoRestore, now: Date, inp: RunningInput): OpenBaoRestoreStatus {
  const forced = inp.forced.length ? ` (force overrode: ${inp.forced.join(", ")})` : "";
  const conds: RestoreCondition[] = [
    {
      type: C.Validated,
      status: "True",
      reason: R.ValidationSucceeded,
      message: `target, snapshot and credentials checked${forced}`,
    },
    {
      type: C.LockAcquired,
      status: "True",
      reason: OpenBaoRestoreReason.Acquired,
      message: "the cluster's operation lock is held by this restore",
    },
    {
      type: C.RestoreComplete,
      status: "False",
      reason: OpenBaoRestoreReason.InProgress,
      message: `restore Job ${inp.jobName} is running`,
    },
  ];
  if (inp.overridden)
    conds.push({
      type: C.OperationLockOverride,
      status: "True",
      reason: R.OperationLockOverridden,
      message: inp.overridden,
    });
  const s = put(r, now, "Running", `restore Job ${inp.jobName} is running`, conds);
  s.jobName = inp.jobName;
  s.snapshotKey = r.spec.source.key;
  if (inp.size !== undefined) s.snapshotSize = inp.size;
  s.startTime = r.status?.startTime ?? stamp(now);
  return s;
}

/** The Job exists and its pod cannot start yet: still Running, RestoreComplete names why. */
export function jobNotStarted(r: OpenBaoRestore, now: Date, message: string): OpenBaoRestoreStatus {
  return put(r, now, "Running", message, [
    { type: C.RestoreComplete, status: "False", reason: R.JobNotStarted, message },
  ]);
}

/** The Job runs (again, after trouble starting): RestoreComplete back to InProgress. */
export function jobStarted(r: OpenBaoRestore, now: Date, jobName: string): OpenBaoRestoreStatus {
  const cur = r.status?.conditions?.find((c) => c.type === C.RestoreComplete);
  if (cur?.reason !== R.JobNotStarted) return r.status ?? {};
  const message = `restore Job ${jobName} is running`;
  return put(r, now, "Running", message, [
    { type: C.RestoreComplete, status: "False", reason: R.InProgress, message },
  ]);
}

/** The Job succeeded and the cluster's pods restart to load the restored state: still Running. */
export function restarting(r: OpenBaoRestore, now: Date, message: string): OpenBaoRestoreStatus {
  return put(r, now, "Running", message, [
    { type: C.RestoreComplete, status: "False", reason: R.InProgress, message },
  ]);
}

/** `notReady`: what of the cluster did not come back Ready within the bound after the restart. */
export function completed(
  r: OpenBaoRestore,
  now: Date,
  size?: number,
  notReady?: string,
): OpenBaoRestoreStatus {
  const pods = notReady ? ` (restarted, but ${notReady})` : "";
  const msg = `snapshot ${r.spec.source.key} restored into ${r.spec.cluster}${pods}; ${FOLLOW_UP}`;
  const s = put(r, now, "Completed", msg, [
    { type: C.RestoreComplete, status: "True", reason: R.RestoreSucceeded, message: msg },
  ]);
  if (size !== undefined) s.snapshotSize = size;
  s.completionTime = stamp(now);
  return s;
}

export function failed(
  r: OpenBaoRestore,
  now: Date,
  reason: OpenBaoRestoreReasonType,
  message: string,
  opts: { unchanged?: boolean } = {},
): OpenBaoRestoreStatus {
  const ran = r.status?.phase === "Running";
  // A failure after the Job ran may have left OpenBao partly restored; before it, nothing changed
  // (nor when OpenBao refused the snapshot before applying it: `unchanged`).
  const tail = ran && !opts.unchanged ? `; ${FOLLOW_UP}` : "; the cluster was not changed";
  const msg = `${message}${tail}`;
  const conds: RestoreCondition[] = [
    { type: C.RestoreComplete, status: "False", reason: R.RestoreFailed, message: `${reason}: ${msg}` },
  ];
  if (!ran) conds.push({ type: C.Validated, status: "False", reason, message });
  const s = put(r, now, "Failed", msg, conds);
  s.completionTime = stamp(now);
  return s;
}
