/**
 * What the backup reconciler (reconciler.ts) and its in-flight half (in-flight.ts) share: the
 * dependencies, and the two steps both take (the executor image, the BackingUp condition).
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import { type CachedReader, liveReader } from "../../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../../runtime/client.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import type { Informer } from "../../../../runtime/informer.js";
import type { Logger } from "../../../../runtime/log.js";
import type { OpenBaoTargetConfig } from "../../config.js";
import { type OperatorImage, operatorImage } from "../../imageverify/check.js";
import type { ImageVerifier } from "../../imageverify/verifier.js";
import type { InAdminOpsPass, OperationLockStore } from "../../opslifecycle/index.js";
import type { SnapshotStoreFactory } from "./ports.js";
import { setBackingUp } from "./status-writes.js";

export interface BackupReconcilerDeps {
  client: KubeClient;
  events: EventRecorder;
  log: Logger;
  config: OpenBaoTargetConfig;
  /** Only asked whether the cluster still exists; decisions use a fresh read. */
  clusters: Pick<Informer<OpenBaoCluster>, "get">;
  /**
   * Where the fresh read comes from: the manager's reader serves the cache unless this process
   * wrote the cluster since and the cache has not shown that write yet (then it asks the API
   * server). Live reads when unset.
   */
  reader?: Pick<CachedReader, "get">;
  stores: SnapshotStoreFactory;
  /** Checks the executor image under spec.operatorImageVerification; unset: not checked. */
  imageVerifier?: ImageVerifier;
  now?: () => Date;
}

/** The reconciler as its in-flight half sees it. */
export interface BackupCore {
  readonly d: BackupReconcilerDeps;
  readonly now: () => Date;
  readonly locks: OperationLockStore;
}

/** The executor image, verified under spec.operatorImageVerification when that is enabled. */
export function executorImage(
  m: BackupCore,
  cluster: OpenBaoCluster,
  image: string,
  rc: InAdminOpsPass,
): Promise<OperatorImage<typeof OpenBaoClusterReason.BackupExecutorImageVerificationFailed>> {
  return operatorImage(
    m.d.imageVerifier,
    { reader: m.d.reader ?? liveReader(m.d.client), events: m.d.events, signal: rc.signal },
    cluster,
    image,
    OpenBaoClusterReason.BackupExecutorImageVerificationFailed,
    "backup executor image",
  );
}

/** The BackingUp condition, staged in the pass's AdminOps commit (an event when its reason moves). */
export function backupCondition(
  m: BackupCore,
  cluster: OpenBaoCluster,
  status: "True" | "False",
  reason: OpenBaoClusterReasonType,
  message: string,
  rc: InAdminOpsPass,
  eventType: "Normal" | "Warning" = "Normal",
): Promise<void> {
  const d = { events: m.d.events, now: m.now };
  return setBackingUp(d, rc.adminOps, cluster, { status, reason, message }, rc.signal, eventType);
}
