/**
 * The restore's side of the cluster's status: `status.restore`, applied under its own field manager
 * (opslifecycle/planes.ts), so the workload, AdminOps and lock writers never carry or remove it.
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../../apis/openbaocluster.js";
import { OpenBaoApiVersion, OpenBaoClusterKind } from "../../../apis/openbaocluster-names.js";
import type { KubeClient } from "../../../runtime/client.js";
import { StatusWriter } from "../../../runtime/status.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import { RESTORE_RECORD_FIELD_MANAGER, restoreRecordPlaneOf } from "../opslifecycle/planes.js";
import type { ClusterRestoreRecord } from "./after-restore-plan.js";

/** Applies `record` as the cluster's status.restore; an unset restartCompletedAt is removed. */
export async function writeClusterRecord(
  client: KubeClient,
  cluster: OpenBaoCluster,
  record: ClusterRestoreRecord,
  signal?: AbortSignal,
): Promise<void> {
  // No cache, on purpose: `cluster` is a live read (job-watch.ts), newer than any informer copy,
  // and this writer lives for one write, so it has no memory to keep; given the cluster informer,
  // its own-write record would call a live copy taken before the watch delivered the write "behind"
  // and subscribe one handler per call.
  const writer = new StatusWriter<OpenBaoClusterStatus>({
    client,
    type: OPENBAOCLUSTER,
    fieldManager: RESTORE_RECORD_FIELD_MANAGER,
    plane: restoreRecordPlaneOf,
  });
  await writer.write(
    { ...cluster, apiVersion: OpenBaoApiVersion, kind: OpenBaoClusterKind },
    { restore: record },
    { ...(signal ? { signal } : {}) },
  );
}
