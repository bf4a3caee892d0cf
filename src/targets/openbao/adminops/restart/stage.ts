/**
 * What a runtime-restart pass stages and reads besides its plan: its record and its Restarting
 * condition (both staged in the pass's one AdminOps commit), the voter pods it compares, and the
 * lock identity of a request.
 */
import { createHash } from "node:crypto";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../apis/openbaocluster-names.js";
import { POD } from "../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../runtime/client.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { isoSeconds } from "../../../../runtime/utc-time.js";
import { refOf, servingRef } from "../../cluster-ref.js";
import { podSelector, voterOrdinal } from "../../identity.js";
import {
  applyConcern,
  changePlane,
  type InAdminOpsPass,
  type LockIdentity,
} from "../../opslifecycle/index.js";
import { setPlaneCondition } from "../../opslifecycle/plane-condition.js";
import type { PodFacts, RuntimeRestartStatus } from "./plan.js";

/** The lock identity of one restart request: one per spec value, stable across operator restarts. */
export function restartLock(cluster: string, restartAt: string): LockIdentity {
  // The value may be up to 253 characters of anything: the holder carries a digest of it.
  const digest = createHash("sha256").update(restartAt).digest("hex").slice(0, 16);
  return { operation: "Restart", holder: `restart/${cluster}/${digest}` };
}

export const stamp = (d: Date): string => isoSeconds(d);

const WARNING = new Set<OpenBaoClusterReasonType>([R.RestartStepFailed, R.StepDownFailed, R.RestartStalled]);

/** Reasons said without an event each time (routine progress). */
const QUIET = new Set<OpenBaoClusterReasonType>([R.RestartInProgress, R.PodNotReady, R.HealthCheckFailed]);

/** The serving voter pods by name, with the UID and creation time the plan compares. */
export async function voterPods(client: KubeClient, cluster: OpenBaoCluster): Promise<Map<string, PodFacts>> {
  const ref = refOf(cluster);
  const serving = servingRef(cluster);
  const selector = Object.entries(podSelector(ref))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const list = await client.list<KubeObject>(POD, {
    namespace: ref.namespace,
    labelSelector: selector,
  });
  const out = new Map<string, PodFacts>();
  for (const p of list.items) {
    const name = p.metadata.name ?? "";
    if (voterOrdinal(serving, name) === undefined || !p.metadata.uid) continue;
    out.set(name, { name, uid: p.metadata.uid, createdAt: p.metadata.creationTimestamp });
  }
  return out;
}

/** Stages a change of status.runtimeRestart in the pass's one AdminOps commit. */
export async function stageRestart(
  cluster: OpenBaoCluster,
  rc: InAdminOpsPass,
  change: (cur: RuntimeRestartStatus | undefined) => RuntimeRestartStatus | undefined,
): Promise<void> {
  await changePlane(rc.adminOps, refOf(cluster), (plane) =>
    applyConcern(plane, "runtimeRestart", change(plane.runtimeRestart)),
  );
}

/** Sets Restarting when it moved; an event when its reason moves (routine progress stays quiet). */
export async function setRestarting(
  events: EventRecorder,
  now: Date,
  cluster: OpenBaoCluster,
  status: "True" | "False",
  reason: OpenBaoClusterReasonType,
  message: string,
  rc: InAdminOpsPass,
): Promise<void> {
  const { moved, before } = await setPlaneCondition(
    rc.adminOps,
    cluster,
    { type: C.Restarting, status, reason, message },
    now,
  );
  if (!moved) return;
  if (before?.reason !== reason && !QUIET.has(reason))
    events.record(cluster, {
      type: WARNING.has(reason) ? "Warning" : "Normal",
      reason,
      action: "Restart",
      note: message.slice(0, 1000),
    });
}

/**
 * Failed steps in a row after which the Restarting condition says the restart is stalled. The
 * runtime's failure backoff (5 s, then 10 s) brings the third failure about 15 s after the first.
 */
export const RESTART_STALLED_AFTER = 3;

/**
 * What Restarting says after `attempts` failed steps in a row. The restart is never given up (as
 * upstream's, whose StatefulSet roll retries for ever): giving up would leave the lock with a half
 * restarted cluster or release it mid-restart. From the RESTART_STALLED_AFTER-th failure on the reason
 * is RestartStalled (a Warning event once) and the message keeps the step's own reason and the count.
 */
export function failedStepCondition(
  reason: OpenBaoClusterReasonType,
  message: string,
  attempts: number,
): { reason: OpenBaoClusterReasonType; message: string } {
  if (attempts < RESTART_STALLED_AFTER)
    return { reason, message: `restart step failed (attempt ${attempts}): ${message}` };
  return {
    reason: R.RestartStalled,
    message: `restart stalled: ${attempts} failed attempts in a row, the last ${reason}: ${message}; still retried with backoff until a step succeeds or spec.runtime.restartAt changes`,
  };
}

/** A step went through: the failures in a row are cleared. */
export async function clearRestartFailures(
  cluster: OpenBaoCluster,
  want: string,
  rc: InAdminOpsPass,
): Promise<void> {
  await stageRestart(cluster, rc, (cur) => {
    if (cur?.restartAt !== want || !cur.consecutiveFailures) return cur;
    const { consecutiveFailures: _n, lastErrorReason: _r, lastErrorMessage: _m, ...rest } = cur;
    return rest;
  });
}
