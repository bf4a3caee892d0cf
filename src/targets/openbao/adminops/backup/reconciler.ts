import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  OpenBaoClusterManagers,
  TriggerBackupAnnotation,
} from "../../../../apis/openbaocluster-names.js";
import { SECRET } from "../../../../runtime/builtin-types.js";
import { liveReader } from "../../../../runtime/cached-reader.js";
import { done, type ReconcileResult, requeueAfter } from "../../../../runtime/controller.js";
import { splitKey } from "../../../../runtime/types.js";
import { isoSeconds } from "../../../../runtime/utc-time.js";
import { OPENBAOCLUSTER, refOf } from "../../cluster-ref.js";
import { objectKey } from "../../executor/contract.js";
import {
  type AdminOpsContext,
  backupHolder,
  commitBeforeRelease,
  contention,
  type InAdminOpsPass,
  type LockIdentity,
  OperationLockStore,
  withAdminOpsPass,
} from "../../opslifecycle/index.js";
import { egressRulesMissing } from "../../profile/egress.js";
import { tlsEnabled, tlsSecretName } from "../../workload/statefulsets/build.js";
import { runRetention } from "./apply-retention.js";
import { type BackupCore, type BackupReconcilerDeps, backupCondition, executorImage } from "./core.js";
import { BackupEvent } from "./events.js";
import { inFlight, RUNNING_POLL_MS, showBackup } from "./in-flight.js";
import { ensureBackupJob } from "./job.js";
import { backupInProgress, forgetBackupMetrics } from "./metrics.js";
import { BackupReason, checkPrerequisites } from "./prerequisites.js";
import type { BackupStatus } from "./result.js";
import { backupJobName, type Due, decide, ScheduleError, shortHash } from "./schedule.js";
import { writeBackup } from "./status-writes.js";

export type { BackupReconcilerDeps };

/** Field manager of the objects this controller creates (Jobs, the backup ServiceAccount). */
export const ADMINOPS_OBJECTS_MANAGER = OpenBaoClusterManagers.adminOps;
/** A missing prerequisite is looked at again after this (Secrets are not watched). */
const PREREQ_POLL_MS = 30_000;

export { RETENTION_TIMEOUT_MS } from "./apply-retention.js";

/** Longest sleep until the next window; long sleeps are cut so a clock jump is noticed. */
const MAX_SLEEP_MS = 15 * 60_000;

export { BackupEvent };

/**
 * The backup half of the AdminOps path. Each pass reads the cluster fresh and moves one step:
 *
 *   in flight (status.backup.jobName) → observe the Job → record the result once → retention → release
 *   idle → window or trigger due? → prerequisites → acquire lock → persist the attempt → create the Job
 *
 * Every step is idempotent and the attempt is persisted before its Job exists, so a pass that resumes
 * after a crash at any point finds the same Job (deterministic name) and the same lock holder, and
 * never launches a second Job or takes a lock that is not its own.
 */
export class BackupReconciler implements BackupCore {
  readonly now: () => Date;
  readonly locks: OperationLockStore;

  constructor(readonly d: BackupReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.locks = new OperationLockStore(d.client, { now: this.now });
  }

  /**
   * One pass. Its status changes go to the AdminOps pass it runs in (the controller's, shared with
   * the upgrade and restart halves and committed once at the end), or to its own, committed here.
   */
  async reconcile(key: string, rc: AdminOpsContext): Promise<ReconcileResult> {
    const { namespace = "", name } = splitKey(key);
    return withAdminOpsPass(this.d.client, { namespace, name }, rc, (pass) => this.pass(key, pass));
  }

  private async pass(key: string, rc: InAdminOpsPass): Promise<ReconcileResult> {
    const { namespace = "", name } = splitKey(key);
    const cached = this.d.clusters.get(key);
    if (!cached) {
      forgetBackupMetrics(namespace, name);
      return done();
    }
    if (cached.metadata.deletionTimestamp) return done();
    // Decisions about Jobs and the lock are made on a fresh read: the cache may not hold our own
    // last write yet, and acting on it could launch a second Job.
    const fresh = await (this.d.reader ?? liveReader(this.d.client)).get<OpenBaoCluster>(
      OPENBAOCLUSTER,
      name,
      namespace,
    );
    if (!fresh) return done();
    const cluster = fresh;
    const ref = refOf(cluster);
    const backup = cluster.status?.backup ?? {};
    if (cluster.spec.backup || cluster.status?.backup) showBackup(ref, backup);

    if (backup.jobName) return inFlight(this, cluster, backup.jobName, rc);
    await this.releaseStaleLock(cluster, rc);
    if (!cluster.spec.backup) return done();
    if (cluster.spec.paused) return done();
    // Said at once, not when the schedule next comes: no backup of this spec could ever run.
    const egress = egressRulesMissing(cluster.spec, "backup");
    if (egress) {
      await backupCondition(
        this,
        cluster,
        "False",
        BackupReason.NetworkEgressRulesRequired,
        egress,
        rc,
        "Warning",
      );
      return done();
    }

    let decision: ReturnType<typeof decide>;
    try {
      decision = decide({
        schedule: cluster.spec.backup.schedule,
        now: this.now(),
        lastAttemptScheduledTime: backup.lastAttemptScheduledTime,
        createdAt: cluster.metadata.creationTimestamp,
        trigger: cluster.metadata.annotations?.[TriggerBackupAnnotation],
        lastHandledTrigger: backup.lastHandledManualTrigger,
      });
    } catch (e) {
      if (!(e instanceof ScheduleError)) throw e;
      await backupCondition(this, cluster, "False", BackupReason.InvalidSchedule, e.message, rc, "Warning");
      return done();
    }
    const next = decision.next ? stamp(decision.next) : undefined;
    if (next !== backup.nextScheduledBackup)
      await writeBackup(rc.adminOps, ref, (b) => withField(b, "nextScheduledBackup", next));
    if (!decision.due) {
      // The last attempt's outcome (BackupSucceeded / BackupFailed) stays the condition until the
      // next attempt: the pass right after recording it would otherwise hide a failure behind Idle
      // within a second. Idle is for a cluster with no attempt recorded yet.
      const cur = cluster.status?.conditions?.find((c) => c.type === C.BackingUp);
      const terminal =
        cur?.reason === BackupReason.BackupSucceeded || cur?.reason === BackupReason.BackupFailed;
      if (!terminal) await backupCondition(this, cluster, "False", BackupReason.Idle, idleMessage(next), rc);
      return this.sleepUntil(decision.next);
    }
    return this.start(cluster, decision.due, next, rc);
  }

  // ---------------------------------------------------------------- starting an attempt

  private async start(
    cluster: OpenBaoCluster,
    due: Due,
    next: string | undefined,
    rc: InAdminOpsPass,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const spec = cluster.spec.backup!;
    const jobName = backupJobName(ref.name, due);
    const id: LockIdentity = { operation: "Backup", holder: backupHolder(ref.name, jobName) };
    const caSecret = tlsEnabled(cluster) ? tlsSecretName(cluster) : undefined;
    const wanted = [spec.tokenSecretRef?.name, spec.target.credentialsSecretRef?.name, caSecret].filter(
      (s): s is string => !!s,
    );
    const present = new Set<string>();
    for (const s of wanted) if (await this.d.client.getOrUndefined(SECRET, s, ref.namespace)) present.add(s);
    const image = spec.image ?? this.d.config.executorImage;
    const pre = image
      ? checkPrerequisites({
          cluster,
          secretsPresent: present,
          caSecret,
          lock: cluster.status?.operationLock,
          holder: id.holder,
        })
      : {
          ok: false as const,
          reason: BackupReason.PrerequisitesMissing,
          message: "no executor image: set spec.backup.image or the openbao target's executorImage",
        };
    if (!pre.ok) {
      const lockHeld = pre.reason === BackupReason.OperationLockHeld;
      await backupCondition(
        this,
        cluster,
        "False",
        pre.reason,
        pre.message,
        rc,
        lockHeld ? "Normal" : "Warning",
      );
      return requeueAfter(
        lockHeld ? contention(cluster.status!.operationLock!, id).requeueAfterMs : PREREQ_POLL_MS,
      );
    }
    // Before the lock: a refused image holds nothing and starts nothing.
    const executor = await executorImage(this, cluster, image!, rc);
    if (!executor.ok) {
      await backupCondition(this, cluster, "False", executor.reason, executor.message, rc, "Warning");
      return requeueAfter(PREREQ_POLL_MS);
    }
    const got = await this.locks.acquire(ref, id, {
      message: `backup ${jobName}`,
      signal: rc.signal,
    });
    if (!got.acquired) {
      const c = contention(got.heldBy, id);
      await backupCondition(this, cluster, "False", c.reason, c.message, rc, c.eventType);
      return requeueAfter(c.requeueAfterMs);
    }
    rc.adminOps.observed(got.cluster);
    // The attempt is persisted before its Job exists: a crash between the two resumes in inFlight(),
    // which creates the same Job, instead of deciding afresh.
    const now = this.now();
    const key = objectKey({
      pathPrefix: spec.target.pathPrefix,
      namespace: ref.namespace,
      cluster: ref.name,
      time: due.window,
      id: shortHash(jobName),
    });
    await writeBackup(rc.adminOps, ref, (b) => {
      const n: BackupStatus = {
        ...b,
        jobName,
        lastAttemptTime: stamp(now),
        lastAttemptScheduledTime: stamp(due.window),
      };
      if (next) n.nextScheduledBackup = next;
      if (due.kind === "manual") n.lastHandledManualTrigger = due.trigger;
      return n;
    });
    await backupCondition(
      this,
      cluster,
      "True",
      BackupReason.BackupInProgress,
      `Job ${jobName} writes ${key}`,
      rc,
    );
    // The attempt (and its condition) is written before its Job exists: the one mid-pass commit.
    await rc.adminOps.commit(rc.signal);
    backupInProgress.set({ namespace: ref.namespace, name: ref.name }, 1);
    if (due.kind === "manual")
      this.d.events.record(cluster, {
        type: "Normal",
        reason: BackupEvent.ManualTriggerAccepted,
        action: "Backup",
        note: `manual backup requested through ${TriggerBackupAnnotation}; Job ${jobName}`,
      });
    await ensureBackupJob(this.d, cluster, jobName, key, executor.image, rc);
    return requeueAfter(RUNNING_POLL_MS);
  }

  /** A backup lock with no attempt in flight is left from a crash after recording: finish it. */
  private async releaseStaleLock(cluster: OpenBaoCluster, rc: InAdminOpsPass): Promise<void> {
    const lock = cluster.status?.operationLock;
    const ref = refOf(cluster);
    if (lock?.operation !== "Backup" || !lock.holder?.startsWith(backupHolder(ref.name, ""))) return;
    await runRetention({ ...this.d, now: this.now }, cluster, rc);
    await commitBeforeRelease(rc);
    await this.locks.release(ref, { operation: "Backup", holder: lock.holder }, rc.signal);
  }

  private sleepUntil(next: Date | undefined): ReconcileResult {
    if (!next) return done();
    const ms = next.getTime() - this.now().getTime();
    return requeueAfter(Math.min(Math.max(ms + 250, 1000), MAX_SLEEP_MS));
  }
}

function stamp(d: Date): string {
  return isoSeconds(d);
}

function idleMessage(next: string | undefined): string {
  return next
    ? `no backup running; next scheduled at ${next}`
    : "no backup running; the schedule has no next run";
}

function withField<K extends keyof BackupStatus>(
  b: BackupStatus,
  k: K,
  v: BackupStatus[K] | undefined,
): BackupStatus {
  const n = { ...b };
  if (v === undefined) delete n[k];
  else n[k] = v;
  return n;
}
