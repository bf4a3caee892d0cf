import type { BackupTarget, ClusterOperation, OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import type { StoredSnapshot } from "./retention.js";

/**
 * What the backup controller needs from its neighbours, as narrow interfaces: the operation lock
 * (opslifecycle) and the object store (listing and deleting keys for retention). Tests and the
 * wiring pass the real implementations; the controller never learns how they work.
 */

export type LockOutcome =
  | { acquired: true }
  | { acquired: false; holder: string; operation?: ClusterOperation };

export interface BackupLockPort {
  /** Takes the lock for `holder`, or renews it when `holder` already has it. */
  acquire(cluster: OpenBaoCluster, holder: string, signal?: AbortSignal): Promise<LockOutcome>;
  /** Releases only when `holder` is the exact current holder; a no-op otherwise. */
  release(cluster: OpenBaoCluster, holder: string, signal?: AbortSignal): Promise<void>;
}

export interface SnapshotStore {
  list(prefix: string, signal?: AbortSignal): Promise<StoredSnapshot[]>;
  delete(key: string, signal?: AbortSignal): Promise<void>;
}

/** Opens the store of a target with the files of its credentials Secret (key → bytes). */
export type SnapshotStoreFactory = (
  target: BackupTarget,
  credentials: Record<string, Buffer> | undefined,
) => Promise<SnapshotStore>;
