/**
 * A backup in flight (status.backup.jobName set): its Job observed to its end, then the result
 * recorded once, told, retention run and the lock released. The reconciler (reconciler.ts) starts
 * attempts and hands them here.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoAnnotation, OpenBaoClusterReason } from "../../../../apis/openbaocluster-names.js";
import { JOB, POD } from "../../../../runtime/builtin-types.js";
import { type ReconcileResult, requeueAfter } from "../../../../runtime/controller.js";
import { AT_ONCE_MS } from "../../../../runtime/stages.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { isoTime } from "../../../../runtime/utc-time.js";
import { refOf } from "../../cluster-ref.js";
import { objectKey } from "../../executor/contract.js";
import {
  backupHolder,
  commitBeforeRelease,
  type InAdminOpsPass,
  type LockIdentity,
} from "../../opslifecycle/index.js";
import { parseDurationMs } from "../../workload/certs/duration.js";
import { endUnstartedJob } from "../jobs/end-unstarted.js";
import {
  DEFAULT_JOB_START_TIMEOUT_MS,
  jobStartHealth,
  notStartedMessage,
  startTimeoutFailure,
} from "../jobs/start-health.js";
import { runRetention } from "./apply-retention.js";
import { type BackupCore, backupCondition, executorImage } from "./core.js";
import { BackupEvent } from "./events.js";
import { ensureBackupJob } from "./job.js";
import {
  backupDuration,
  backupFailureTotal,
  backupLastSuccess,
  backupSize,
  backupSuccessTotal,
  backupTotal,
  showBackupStatus,
} from "./metrics.js";
import { BackupReason } from "./prerequisites.js";
import { type BackupStatus, jobOutcome, recordOutcome } from "./result.js";
import { shortHash } from "./schedule.js";
import { writeBackup } from "./status-writes.js";

/** While a Job runs: the Job watch wakes the controller; this only bounds a missed event. */
export const RUNNING_POLL_MS = 30_000;

/** A backup whose Job was persisted: the Job observed, its pod's start bound held, the result recorded. */
export async function inFlight(
  m: BackupCore,
  cluster: OpenBaoCluster,
  jobName: string,
  rc: InAdminOpsPass,
): Promise<ReconcileResult> {
  const ref = refOf(cluster);
  const id: LockIdentity = { operation: "Backup", holder: backupHolder(ref.name, jobName) };
  const job = await m.d.client.getOrUndefined<KubeObject>(JOB, jobName, ref.namespace);
  if (!job) {
    const lock = cluster.status?.operationLock;
    const ours = lock?.holder === id.holder;
    if (ours && cluster.spec.backup) {
      // Persisted but never created (crash between the two): create it now.
      const b = cluster.status!.backup!;
      const key = objectKey({
        pathPrefix: cluster.spec.backup.target.pathPrefix,
        namespace: ref.namespace,
        cluster: ref.name,
        time: new Date(b.lastAttemptScheduledTime ?? b.lastAttemptTime ?? isoTime(m.now())),
        id: shortHash(jobName),
      });
      const image = cluster.spec.backup.image ?? m.d.config.executorImage;
      const executor = image ? await executorImage(m, cluster, image, rc) : undefined;
      if (executor?.ok) {
        await ensureBackupJob(m.d, cluster, jobName, key, executor.image, rc);
        return requeueAfter(RUNNING_POLL_MS);
      }
    }
    return finish(
      m,
      cluster,
      jobName,
      {
        state: "failed",
        reason: OpenBaoClusterReason.JobMissing,
        message: `Job ${jobName} is gone and its result was never read`,
      },
      undefined,
      undefined,
      id,
      rc,
    );
  }
  const pods = await m.d.client.list<KubeObject>(POD, {
    namespace: ref.namespace,
    labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
  });
  const outcome = jobOutcome(job, pods.items);
  if (outcome.state === "running") {
    const timeoutMs = m.d.config.jobStartTimeoutMs ?? DEFAULT_JOB_START_TIMEOUT_MS;
    const health = jobStartHealth(
      job,
      pods.items,
      m.now(),
      timeoutMs,
      cluster.status?.backup?.lastAttemptTime,
    );
    if (!health.started && health.expired) {
      // Never started: the backup fails now, like a run that failed, and frees the lock; the Job
      // is ended so its pod stops retrying.
      const failure = startTimeoutFailure(jobName, health, timeoutMs);
      await endUnstartedJob(m.d.client, job, failure);
      return finish(m, cluster, jobName, { state: "failed", ...failure }, undefined, undefined, id, rc);
    }
    // Renew (rate-limited by the lock store) so the lock shows the backup is alive. Renew only: a
    // restore that overrode this lock and has since released it must not see the backup take the
    // cluster back; the Job is left to end and its result is recorded without the lock.
    const r = await m.locks.renew(ref, id, { message: `backup ${jobName}`, signal: rc.signal });
    if (!r.held)
      rc.log.debug(
        { job: jobName, holder: r.current?.holder ?? "" },
        "backup Job still running without the operation lock (taken over)",
      );
    if (!health.started && health.trouble) {
      await backupCondition(
        m,
        cluster,
        "True",
        OpenBaoClusterReason.JobNotStarted,
        notStartedMessage(jobName, health),
        rc,
        "Warning",
      );
      return requeueAfter(untilDeadline(health.deadline, m.now()));
    }
    // Started (or not in trouble yet): in progress again after a pull that cured itself.
    const key = job.metadata.annotations?.[OpenBaoAnnotation.BackupKey];
    await backupCondition(
      m,
      cluster,
      "True",
      BackupReason.BackupInProgress,
      `Job ${jobName} writes ${key}`,
      rc,
    );
    return requeueAfter(health.started ? RUNNING_POLL_MS : untilDeadline(health.deadline, m.now()));
  }
  const started = (job["status"] as { startTime?: string } | undefined)?.startTime;
  return finish(
    m,
    cluster,
    jobName,
    outcome,
    job.metadata.annotations?.[OpenBaoAnnotation.BackupKey],
    started ? new Date(started) : undefined,
    id,
    rc,
  );
}

/** Records the result once, tells it (metrics, events), runs retention and releases the lock. */
async function finish(
  m: BackupCore,
  cluster: OpenBaoCluster,
  jobName: string,
  outcome: Exclude<ReturnType<typeof jobOutcome>, { state: "running" }>,
  key: string | undefined,
  startedAt: Date | undefined,
  id: LockIdentity,
  rc: InAdminOpsPass,
): Promise<ReconcileResult> {
  const ref = refOf(cluster);
  const labels = { namespace: ref.namespace, name: ref.name };
  const now = m.now();
  let recorded = false;
  let after: BackupStatus | undefined;
  // Recorded once: the write that records the result also clears jobName, and it only happens while
  // jobName still names this Job (a repeated pass sees no Job in flight and records nothing).
  const w = await writeBackup(rc.adminOps, ref, (b) => {
    if (b?.jobName !== jobName) return b;
    recorded = true;
    after = recordOutcome(b, outcome, key, startedAt, now);
    return after;
  });
  const result = recorded && after ? after : undefined;
  if (result) {
    const ok = outcome.state === "succeeded";
    await backupCondition(
      m,
      cluster,
      "False",
      ok ? BackupReason.BackupSucceeded : BackupReason.BackupFailed,
      ok
        ? `last backup ${result.lastBackupName ?? jobName}`
        : `Job ${jobName} failed (${outcome.reason}); ${result.consecutiveFailures} consecutive failures`,
      rc,
      ok ? "Normal" : "Warning",
    );
  }
  // The result is written before it is told (metrics, events) and before retention and the lock
  // release: a write that fails tells nothing, and the next pass records the result then.
  const { wrote } = await rc.adminOps.commit(rc.signal);
  if (result && wrote) {
    showBackup(ref, result);
    backupTotal.inc(labels);
    if (outcome.state === "succeeded") {
      backupSuccessTotal.inc(labels);
      if (outcome.size !== undefined) backupSize.set(labels, outcome.size);
      const ms = outcome.durationMs ?? (startedAt ? now.getTime() - startedAt.getTime() : undefined);
      if (ms !== undefined) backupDuration.observe(labels, ms / 1000);
      backupLastSuccess.set(labels, Math.floor(now.getTime() / 1000));
      m.d.events.record(cluster, {
        type: "Normal",
        reason: BackupEvent.Succeeded,
        action: "Backup",
        note: `snapshot ${result.lastBackupKey ?? jobName} uploaded (${result.lastBackupSize ?? "?"} bytes in ${result.lastBackupDuration ?? "?"})`,
      });
    } else {
      backupFailureTotal.inc({ ...labels, reason: outcome.reason });
      m.d.events.record(cluster, {
        type: "Warning",
        reason: BackupEvent.Failed,
        action: "Backup",
        note: `Job ${jobName}: ${outcome.reason}: ${outcome.message}`.slice(0, 1000),
      });
    }
  }
  await runRetention({ ...m.d, now: m.now }, w, rc);
  await commitBeforeRelease(rc);
  await m.locks.release(ref, id, rc.signal);
  return requeueAfter(AT_ONCE_MS);
}

/** Next look at a Job that has not started: its deadline, or the usual poll if that comes first. */
function untilDeadline(deadline: Date, now: Date): number {
  return Math.min(RUNNING_POLL_MS, Math.max(deadline.getTime() - now.getTime() + 250, 1000));
}

/** The backup gauges from status.backup (the last duration parsed back from its Go-style text). */
export function showBackup(ref: { namespace: string; name: string }, backup: BackupStatus): void {
  let seconds: number | undefined;
  try {
    seconds = backup.lastBackupDuration
      ? parseDurationMs(backup.lastBackupDuration, "lastBackupDuration") / 1000
      : undefined;
  } catch {
    seconds = undefined; // written by someone else in another form: the gauge waits for the next backup
  }
  showBackupStatus({ namespace: ref.namespace, name: ref.name }, backup, seconds);
  if (backup.lastBackupTime) {
    const t = Date.parse(backup.lastBackupTime);
    if (Number.isFinite(t))
      backupLastSuccess.set({ namespace: ref.namespace, name: ref.name }, Math.floor(t / 1000));
  }
}
