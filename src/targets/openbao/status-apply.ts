import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../apis/openbaocluster.js";
import type { KubeClient } from "../../runtime/client.js";
import { type StatusCache, StatusWriter } from "../../runtime/status.js";
import { OPENBAOCLUSTER } from "./cluster-ref.js";
import { WORKLOAD_FIELD_MANAGER, workloadPlaneOf } from "./opslifecycle/planes.js";

/**
 * The workload controller's status writer: its plane only (nextStatus leaves the AdminOps plane
 * and the lock out), forced, since it is the only writer of those fields. Compared on that plane,
 * so another writer's fields never make a write look due.
 */
export function workloadStatusWriter(
  client: KubeClient,
  cache?: StatusCache,
): StatusWriter<OpenBaoClusterStatus> {
  return new StatusWriter<OpenBaoClusterStatus>({
    client,
    type: OPENBAOCLUSTER,
    fieldManager: WORKLOAD_FIELD_MANAGER,
    plane: workloadPlaneOf,
    ...(cache ? { cache } : {}),
  });
}

/** One unconditional write of the workload plane; the tests of the planes call it next to the other writers. */
export function applyWorkloadStatus(
  client: KubeClient,
  cluster: Pick<OpenBaoCluster, "apiVersion" | "kind" | "metadata">,
  next: OpenBaoClusterStatus,
  signal?: AbortSignal,
): Promise<OpenBaoCluster> {
  return workloadStatusWriter(client).apply(cluster as OpenBaoCluster, next, signal);
}
