import type { BackupTarget, OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import type { OpenBaoRestoreReasonType } from "../../../apis/openbaorestore-names.js";
import type { KubeObject } from "../../../runtime/types.js";

/**
 * What the restore controller needs from its neighbours, as narrow interfaces: the object store's
 * head (objectstore/), and the executor Job builder and result reader (adminops/jobs/, executor/).
 * wiring.ts passes the real ones; the controller never handles snapshot bytes.
 */

export type SnapshotHead = { exists: true; size?: number } | { exists: false };

/**
 * Whether the snapshot object exists and can be read with these credentials (the files of the
 * target's credentialsSecretRef, key → bytes). A store that refuses or cannot be reached throws; its
 * error message must not carry credential values.
 */
export type SnapshotProbe = (
  target: BackupTarget,
  key: string,
  credentials: Record<string, Buffer> | undefined,
  signal?: AbortSignal,
) => Promise<SnapshotHead>;

export type RestoreJobOutcome =
  | { state: "running" }
  | { state: "succeeded"; size?: number; durationMs?: number }
  | { state: "failed"; reason: OpenBaoRestoreReasonType; message: string };

export interface RestoreJobs {
  /** Objects the Job needs before it can start (its ServiceAccount), applied idempotently. */
  prepare?(restore: OpenBaoRestore, cluster: OpenBaoCluster, signal?: AbortSignal): Promise<void>;
  /**
   * The executor image the Job may run (pinned to its verified digest under the cluster's
   * spec.operatorImageVerification), or why it may not; unset: the image as build() chooses it.
   */
  image?(
    restore: OpenBaoRestore,
    cluster: OpenBaoCluster,
    signal?: AbortSignal,
  ): Promise<{ ok: true; image: string } | { ok: false; reason: OpenBaoRestoreReasonType; message: string }>;
  /** The restore Job for this request, named `name`, owned (controller) by the restore. Pure. */
  build(restore: OpenBaoRestore, cluster: OpenBaoCluster, name: string, image?: string): KubeObject;
  /** Where the Job stands, from the Job and its pods (the executor's termination message). Pure. */
  outcome(job: KubeObject, pods: readonly KubeObject[]): RestoreJobOutcome;
}
