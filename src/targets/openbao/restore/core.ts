/**
 * What the OpenBaoRestore reconciler (reconciler.ts) and its Job watch (job-watch.ts) share: the
 * dependencies and the part of the reconciler the watch calls.
 */

import type { OpenBaoRestore, OpenBaoRestoreStatus } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreReason, type OpenBaoRestoreReasonType } from "../../../apis/openbaorestore-names.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { ReconcileContext, ReconcileResult } from "../../../runtime/controller.js";
import type { EventInput, KindEvents } from "../../../runtime/events.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Logger } from "../../../runtime/log.js";
import type { OperationLockStore } from "../opslifecycle/lock-store.js";
import type { RestoreJobs, SnapshotProbe } from "./ports.js";
import { failed } from "./status.js";

/**
 * How long each pool may take to come back Ready after the restore restarted it: OpenBao pods start
 * and unseal in well under a minute; pods still not Ready after ten need a person (a restored seal
 * they cannot open), and the restore must not hold its cluster's lock meanwhile.
 */
export const DEFAULT_AFTER_RESTORE_TIMEOUT_MS = 10 * 60_000;

/** An event of the restore (recorded on it, and on its cluster where the cluster's side changed). */
export type RestoreEvent = EventInput<OpenBaoRestoreReasonType>;

export interface RestoreReconcilerDeps {
  client: KubeClient;
  events: KindEvents<OpenBaoRestoreReasonType>;
  log: Logger;
  restores: Informer<OpenBaoRestore>;
  probe: SnapshotProbe;
  jobs: RestoreJobs;
  now?: () => Date;
  /** Re-check period while waiting (a Secret, initialization, the lock) or while the Job runs. */
  pollMs?: number;
  /** How long the restore Job's pod may take to start (the target's jobStartTimeout). */
  jobStartTimeoutMs?: number;
  /**
   * How long the voters, and then the read replicas, may take to be back and Ready after the
   * restore's restart before it completes without them (default DEFAULT_AFTER_RESTORE_TIMEOUT_MS).
   */
  afterRestoreTimeoutMs?: number;
  /**
   * Test seam, called after each status write: a test throws here to play an operator that stops
   * right after a receipt stage was recorded, then runs a fresh reconciler.
   */
  afterStatusWrite?: (written: OpenBaoRestoreStatus) => void;
}

/** The reconciler as its Job watch sees it. */
export interface RestoreCore {
  readonly d: RestoreReconcilerDeps;
  readonly lock: OperationLockStore;
  readonly now: () => Date;
  readonly pollMs: number;
  readonly startTimeoutMs: number;
  readonly afterRestoreTimeoutMs: number;
  write(r: OpenBaoRestore, next: OpenBaoRestoreStatus, rc: ReconcileContext): Promise<OpenBaoRestore>;
  event(r: OpenBaoRestore, e: RestoreEvent): void;
  finish(
    r: OpenBaoRestore,
    next: OpenBaoRestoreStatus,
    m: { reason?: string; durationS?: number },
    rc: ReconcileContext,
  ): Promise<ReconcileResult>;
}

/** A Job under the restore's name that is not its own: the request fails, that Job is left alone. */
export function finishOnForeignJob(
  m: RestoreCore,
  r: OpenBaoRestore,
  jobName: string,
  rc: ReconcileContext,
): Promise<ReconcileResult> {
  return m.finish(
    r,
    failed(
      r,
      m.now(),
      OpenBaoRestoreReason.JobConflict,
      `a Job named ${jobName} exists and does not belong to this OpenBaoRestore`,
    ),
    { reason: OpenBaoRestoreReason.JobConflict },
    rc,
  );
}
