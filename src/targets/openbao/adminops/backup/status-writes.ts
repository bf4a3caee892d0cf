import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../../runtime/client.js";
import { type Condition, setCondition } from "../../../../runtime/conditions.js";
import type { ReconcileContext } from "../../../../runtime/controller.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import { refOf } from "../../cluster-ref.js";
import type { ClusterRef } from "../../identity.js";
import { writeAdminOpsConcern } from "../../opslifecycle/index.js";
import { BackupReason } from "./prerequisites.js";
import type { BackupStatus } from "./result.js";

/** status.adminOps' backup concern, changed from what the fresh object holds. */
export async function writeBackup(
  client: KubeClient,
  ref: ClusterRef,
  change: (b: BackupStatus) => BackupStatus,
  rc: ReconcileContext,
): Promise<OpenBaoCluster> {
  const r = await writeAdminOpsConcern(client, ref, "backup", (cur) => change(cur ?? {}), {
    signal: rc.signal,
  });
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
  d: { client: KubeClient; events: EventRecorder; now: () => Date },
  cluster: OpenBaoCluster,
  condition: { status: "True" | "False"; reason: OpenBaoClusterReasonType; message: string },
  rc: ReconcileContext,
  eventType: "Normal" | "Warning" = "Normal",
): Promise<void> {
  const { status, reason, message } = condition;
  const before = cluster.status?.conditions?.find((c) => c.type === C.BackingUp);
  if (before?.status === status && before.reason === reason && before.message === message) return;
  const now = d.now();
  await writeAdminOpsConcern(
    d.client,
    refOf(cluster),
    "conditions",
    (cur) =>
      setCondition(
        (cur ?? []) as Condition[],
        { type: C.BackingUp, status, reason, message, observedGeneration: cluster.metadata.generation },
        now,
      ),
    { signal: rc.signal },
  );
  if (before?.reason !== reason && !QUIET_REASONS.has(reason))
    d.events.record(cluster, { type: eventType, reason, action: "Backup", note: message });
}
