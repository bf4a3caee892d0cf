/**
 * Writes of status.upgrade (and, for a handled request, status.upgradeRequests in the same apply),
 * through the AdminOps plane: fresh read, pure change, conditional apply. `change` returns undefined
 * to leave the status as it is (a guard that no longer holds after a lost race writes nothing).
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { deepEqual } from "../../../../../runtime/converge.js";
import type { ClusterRef } from "../../../identity.js";
import {
  ADMINOPS_FIELD_MANAGER,
  adminOpsPlaneOf,
  applyConcern,
  casStatus,
} from "../../../opslifecycle/index.js";

export type UpgradeStatus = NonNullable<OpenBaoClusterStatus["upgrade"]>;
export type UpgradeRequestsStatus = NonNullable<OpenBaoClusterStatus["upgradeRequests"]>;

export interface UpgradeChange {
  /** The new status.upgrade; null removes it. */
  upgrade: UpgradeStatus | null;
  requests?: UpgradeRequestsStatus;
}

export interface UpgradeWrite {
  cluster: OpenBaoCluster;
  /** The change applied (false: the guard refused it, or nothing differed). */
  wrote: boolean;
}

export async function writeUpgrade(
  client: KubeClient,
  ref: ClusterRef,
  change: (current: UpgradeStatus | undefined, fresh: OpenBaoCluster) => UpgradeChange | undefined,
  signal?: AbortSignal,
): Promise<UpgradeWrite> {
  const r = await casStatus(
    client,
    ref,
    (fresh) => {
      const before = adminOpsPlaneOf(fresh.status);
      const c = change(structuredClone(before.upgrade), fresh);
      if (!c) return { decision: false };
      let next = applyConcern(before, "upgrade", c.upgrade ?? undefined);
      if (c.requests) next = applyConcern(next, "upgradeRequests", c.requests);
      return deepEqual(before, next) ? { decision: false } : { decision: true, plane: next };
    },
    { fieldManager: ADMINOPS_FIELD_MANAGER, signal },
  );
  return { cluster: r.cluster, wrote: r.wrote && r.decision };
}

export const stamp = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, "Z");
