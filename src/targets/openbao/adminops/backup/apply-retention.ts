import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { SECRET } from "../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../runtime/client.js";
import type { ReconcileContext } from "../../../../runtime/controller.js";
import { errorMessage } from "../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { refOf } from "../../cluster-ref.js";
import { BackupEvent } from "./events.js";
import { backupRetentionDeleted } from "./metrics.js";
import type { SnapshotStoreFactory } from "./ports.js";
import { selectForDeletion } from "./retention.js";
import { backupKeyPrefix } from "./schedule.js";

/**
 * Retention runs before the lock is released, so it is bounded: an object store that accepts
 * connections and never answers (the SDKs set no request timeout) would otherwise hold the lock
 * forever. Listing and deleting a cluster's snapshots takes a few requests.
 */
export const RETENTION_TIMEOUT_MS = 60_000;

export interface RetentionDeps {
  client: KubeClient;
  events: EventRecorder;
  stores: SnapshotStoreFactory;
  now: () => Date;
}

/**
 * After terminal processing and only with a recorded success as guard (see retention.ts for why it
 * runs there). A failure is an event and a log line; it never fails the backup or keeps the lock.
 */
export async function runRetention(
  d: RetentionDeps,
  cluster: OpenBaoCluster,
  rc: ReconcileContext,
): Promise<void> {
  const spec = cluster.spec.backup;
  const b = cluster.status?.backup;
  const policy = spec?.retention;
  if (!spec || !policy || !b?.lastBackupTime || !b.lastBackupKey) return;
  if (!(policy.maxCount && policy.maxCount > 0) && !policy.maxAge) return;
  const deadline = AbortSignal.any([rc.signal, AbortSignal.timeout(RETENTION_TIMEOUT_MS)]);
  try {
    await bounded(
      deleteExpired(d, cluster, deadline),
      deadline,
      `retention did not finish within ${RETENTION_TIMEOUT_MS / 1000} s (the object store does not answer)`,
    );
  } catch (e) {
    if (rc.signal.aborted) throw e;
    rc.log.warn({ err: errorMessage(e) }, "backup retention failed");
    d.events.record(cluster, {
      type: "Warning",
      reason: BackupEvent.RetentionFailed,
      action: "Retention",
      note: `retention failed: ${errorMessage(e)}`.slice(0, 1000),
    });
  }
}

async function deleteExpired(d: RetentionDeps, cluster: OpenBaoCluster, signal: AbortSignal): Promise<void> {
  const spec = cluster.spec.backup!;
  const b = cluster.status!.backup!;
  const policy = spec.retention!;
  const ref = refOf(cluster);
  const credsName = spec.target.credentialsSecretRef?.name;
  let creds: Record<string, Buffer> | undefined;
  if (credsName) {
    const s = await d.client.get<KubeObject>(SECRET, credsName, ref.namespace);
    const data = (s["data"] ?? {}) as Record<string, string>;
    creds = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64")]));
  }
  const store = await d.stores(spec.target, creds);
  const prefix = backupKeyPrefix(spec.target.pathPrefix, ref.namespace, ref.name);
  const objects = await store.list(prefix, signal);
  const doomed = selectForDeletion({ objects, policy, now: d.now(), lastSuccessKey: b.lastBackupKey! });
  for (const k of doomed) {
    signal.throwIfAborted();
    await store.delete(k, signal);
  }
  if (doomed.length) {
    backupRetentionDeleted.inc({ namespace: ref.namespace, name: ref.name }, doomed.length);
    d.events.record(cluster, {
      type: "Normal",
      reason: BackupEvent.RetentionApplied,
      action: "Retention",
      note: `deleted ${doomed.length} snapshot(s) past spec.backup.retention; ${objects.length - doomed.length} kept`,
    });
  }
}

/** Settles with `work`, or rejects with `message` once `signal` aborts (the work may go on, unused). */
function bounded<T>(work: Promise<T>, signal: AbortSignal, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(message));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
