import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../../runtime/client.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import type { ClusterRef } from "../../identity.js";
import { type AdminOpsPass, applyConcern, changePlane } from "../../opslifecycle/index.js";
import { setPlaneCondition } from "../../opslifecycle/plane-condition.js";
import { BackupReason } from "./prerequisites.js";
import type { BackupStatus } from "./result.js";

/**
 * The backup half's status changes. Inside an AdminOps pass they are staged in its AdminOpsPass and
 * applied with the pass's other changes in one write (adminops-pass.ts); given a client (tests,
 * tools) each is written at once.
 */

/** status.adminOps' backup concern, changed from what the plane holds; the cluster as the pass now sees it. */
export async function writeBackup(
  to: KubeClient | AdminOpsPass,
  ref: ClusterRef,
  change: (b: BackupStatus) => BackupStatus,
  signal?: AbortSignal,
): Promise<OpenBaoCluster> {
  const r = await changePlane(
    to,
    ref,
    (plane) => applyConcern(plane, "backup", change(structuredClone(plane.backup ?? {}))),
    signal,
  );
  return r.cluster;
}

/** The routine reasons: they change every backup, so they make no event (the outcome has its own). */
const QUIET_REASONS = new Set<OpenBaoClusterReasonType>([
  BackupReason.Idle,
  BackupReason.BackupInProgress,
  BackupReason.BackupSucceeded,
  BackupReason.BackupFailed,
]);

/** The BackingUp condition; an event only when its reason moves (no event per pass). */
export async function setBackingUp(
  d: { events: EventRecorder; now: () => Date },
  to: KubeClient | AdminOpsPass,
  cluster: OpenBaoCluster,
  condition: { status: "True" | "False"; reason: OpenBaoClusterReasonType; message: string },
  signal?: AbortSignal,
  eventType: "Normal" | "Warning" = "Normal",
): Promise<void> {
  const { status, reason, message } = condition;
  const { moved, before } = await setPlaneCondition(
    to,
    cluster,
    { type: C.BackingUp, status, reason, message },
    d.now(),
    signal,
  );
  if (!moved) return;
  if (before?.reason !== reason && !QUIET_REASONS.has(reason))
    d.events.record(cluster, { type: eventType, reason, action: "Backup", note: message });
}
