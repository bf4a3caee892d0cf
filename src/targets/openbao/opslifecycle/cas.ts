/**
 * The conditional status write of the runtime (read-decide-apply under a resourceVersion
 * precondition) bound to OpenBaoCluster: the lock's mutual exclusion and the AdminOps plane's "no
 * lost update" both rest on it.
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import { type CasOptions, casStatus as casObjectStatus } from "../../../runtime/status.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";

export { type CasOptions, isFieldManagerConflict, LostRacesError } from "../../../runtime/status.js";

export interface CasResult<D> {
  decision: D;
  /** The cluster after the write, or as read when nothing was written. */
  cluster: OpenBaoCluster;
  wrote: boolean;
  retries: number;
  forced: boolean;
}

export async function casStatus<D>(
  client: KubeClient,
  ref: ClusterRef,
  decide: (fresh: OpenBaoCluster) => { decision: D; plane?: OpenBaoClusterStatus },
  opts: CasOptions,
): Promise<CasResult<D>> {
  const { object, ...rest } = await casObjectStatus<OpenBaoCluster, OpenBaoClusterStatus, D>(
    client,
    OPENBAOCLUSTER,
    ref,
    decide,
    opts,
  );
  return { ...rest, cluster: object };
}
