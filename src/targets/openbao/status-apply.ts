import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../apis/openbaocluster.js";
import type { KubeClient } from "../../runtime/client.js";
import { OPENBAOCLUSTER } from "./cluster-ref.js";
import { WORKLOAD_FIELD_MANAGER } from "./opslifecycle/planes.js";

/**
 * The workload controller's status write: its plane only (nextStatus leaves the AdminOps plane and
 * the lock out), forced, since it is the only writer of those fields and works from the informer's
 * copy. The tests of the planes call this same function next to the other writers.
 */
export function applyWorkloadStatus(
  client: KubeClient,
  cluster: Pick<OpenBaoCluster, "apiVersion" | "kind" | "metadata">,
  next: OpenBaoClusterStatus,
  signal?: AbortSignal,
): Promise<OpenBaoCluster> {
  return client.applyStatus<OpenBaoCluster>(
    OPENBAOCLUSTER,
    {
      apiVersion: cluster.apiVersion,
      kind: cluster.kind,
      metadata: { name: cluster.metadata.name, namespace: cluster.metadata.namespace },
      status: next,
    },
    { fieldManager: WORKLOAD_FIELD_MANAGER, force: true, signal },
  );
}
