/**
 * Changes of status.upgrade (and, for a handled request, status.upgradeRequests in the same apply),
 * through the AdminOps plane: staged in the pass's AdminOpsPass (one apply at its end), or written
 * at once (fresh read, pure change, conditional apply) given a client. `change` returns undefined
 * to leave the status as it is (a guard that no longer holds after a lost race writes nothing).
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { isoSeconds } from "../../../../../runtime/utc-time.js";
import type { ClusterRef } from "../../../identity.js";
import { type AdminOpsPass, applyConcern, changePlane } from "../../../opslifecycle/index.js";

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
  to: KubeClient | AdminOpsPass,
  ref: ClusterRef,
  change: (current: UpgradeStatus | undefined, fresh: OpenBaoCluster) => UpgradeChange | undefined,
  signal?: AbortSignal,
): Promise<UpgradeWrite> {
  const r = await changePlane(
    to,
    ref,
    (before, fresh) => {
      const c = change(before.upgrade, fresh);
      if (!c) return undefined;
      const next = applyConcern(before, "upgrade", c.upgrade ?? undefined);
      return c.requests ? applyConcern(next, "upgradeRequests", c.requests) : next;
    },
    signal,
  );
  return { cluster: r.cluster, wrote: r.wrote };
}

export const stamp = (d: Date): string => isoSeconds(d);
