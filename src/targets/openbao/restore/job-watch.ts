/**
 * The restore once committed to its Job: the Job watched to its end (its pod's start bound
 * included), then the follow-through that restarts the cluster's pods. The reconciler
 * (reconciler.ts) gets here once status.execution says the Job was committed to.
 */

import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreCondition, OpenBaoRestoreReason } from "../../../apis/openbaorestore-names.js";
import { JOB, POD, STATEFULSET } from "../../../runtime/builtin-types.js";
import { type ReconcileContext, type ReconcileResult, requeueAfter } from "../../../runtime/controller.js";
import { isConflict, isNotFound } from "../../../runtime/errors.js";
import type { KubeObject } from "../../../runtime/types.js";
import { isoSeconds } from "../../../runtime/utc-time.js";
import { endUnstartedJob } from "../adminops/jobs/end-unstarted.js";
import { jobStartHealth, notStartedMessage, startTimeoutFailure } from "../adminops/jobs/start-health.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";
import { Component } from "../identity.js";
import { jobFinishedAt, openbaoPodSelector, poolOf, sealMismatchHint } from "./after-restore.js";
import { type PodFacts, type Pool, planAfterRestore, restoreToken } from "./after-restore-plan.js";
import { writeClusterRecord } from "./cluster-record.js";
import { finishOnForeignJob, type RestoreCore, type RestoreEvent } from "./core.js";
import { isSuspended, resumeJob } from "./job-suspend.js";
import { restoreJobName, restoreLockIdentity } from "./names.js";
import type { RestoreJobOutcome } from "./ports.js";
import { created, followThroughComplete, lost, terminalObserved } from "./receipt.js";
import { completed, failed, jobNotStarted, jobStarted, restarting, running } from "./status.js";

/**
 * While the pods restarted after the snapshot come back. The pod watch maps only the restore Job's
 * own pods, not the cluster's, so their return is polled.
 */
const PODS_BACK_POLL_MS = 2_000;

/**
 * A restore committed to its Job: only that Job is observed, to its end, then the follow-through.
 */
export async function observe(
  m: RestoreCore,
  r0: OpenBaoRestore,
  rc: ReconcileContext,
): Promise<ReconcileResult> {
  let r = r0;
  const ns = r.metadata.namespace!;
  const exec = r.status?.execution;
  const jobName = exec?.jobName ?? r.status?.jobName ?? restoreJobName(r);
  // Renewal keeps the lock's audit fields current; a holder change here means another restore
  // overrode it, which the message says, while this Job is still observed to its end.
  const ref: ClusterRef = { name: r.spec.cluster, namespace: ns };
  const held = await m.lock
    .acquire(ref, restoreLockIdentity(r), { signal: rc.signal })
    .catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
  if (held && !held.acquired)
    rc.log.warn({ holder: held.heldBy.holder }, "the operation lock was taken from this running restore");
  const found = await m.d.client.getOrUndefined(JOB, jobName, ns);
  if (!found) {
    // Its success was seen before it went (TTL, garbage collection): the follow-through goes on.
    if (exec?.stage === "TerminalObserved" && exec.terminalResult === "Succeeded" && exec.terminalObservedAt)
      return followThrough(m, r, new Date(exec.terminalObservedAt), undefined, undefined, rc);
    // Committed and gone: reported (phase Unknown), never created again.
    return m.finish(r, lost(r, m.now(), jobName), { reason: OpenBaoRestoreReason.JobMissing }, rc);
  }
  if (!ownedBy(found, r)) return finishOnForeignJob(m, r, jobName, rc);
  // The operator stopped between committing and resuming the Job: it is resumed now — the one
  // committed (by uid), never another that took its name.
  let job = found;
  if (isSuspended(job)) {
    if (exec?.jobUID && exec.jobUID !== job.metadata.uid)
      return m.finish(r, lost(r, m.now(), jobName), { reason: OpenBaoRestoreReason.JobMissing }, rc);
    job = await resumeJob(m.d.client, job);
  }
  // The operator stopped between committing and recording the Job: recorded now, from the Job.
  if (exec?.stage === "Committed" || r.status?.phase !== "Running")
    r = await m.write(
      r,
      running({ ...r, status: created(r, m.now(), job.metadata.uid) }, m.now(), {
        jobName,
        forced: [],
      }),
      rc,
    );
  const pods = await m.d.client.list(POD, { namespace: ns, labelSelector: `job-name=${jobName}` });
  const outcome: RestoreJobOutcome = m.d.jobs.outcome(job, pods.items);
  if (outcome.state === "running") return whileRunning(m, r, job, pods.items, rc);
  const startedMs = Date.parse(r.status?.startTime ?? "");
  const durationS =
    outcome.state === "succeeded" && outcome.durationMs !== undefined
      ? outcome.durationMs / 1000
      : Number.isFinite(startedMs)
        ? (m.now().getTime() - startedMs) / 1000
        : undefined;
  if (outcome.state === "succeeded") {
    if (r.status?.execution?.stage !== "TerminalObserved")
      r = await m.write(r, terminalObserved(r.status ?? {}, m.now(), "Succeeded"), rc);
    return followThrough(m, r, jobFinishedAt(job), outcome.size, durationS, rc);
  }
  if (outcome.reason === OpenBaoRestoreReason.SealMismatch) {
    // OpenBao checked the seal before touching anything: say what the target needs, not "follow up".
    const cluster = await m.d.client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, r.spec.cluster, ns);
    return m.finish(
      r,
      terminalObserved(
        failed(r, m.now(), outcome.reason, `${outcome.message}: ${sealMismatchHint(cluster)}`, {
          unchanged: true,
        }),
        m.now(),
        "Failed",
      ),
      { reason: outcome.reason, durationS },
      rc,
    );
  }
  return m.finish(
    r,
    terminalObserved(failed(r, m.now(), outcome.reason, outcome.message), m.now(), "Failed"),
    { reason: outcome.reason, durationS },
    rc,
  );
}

/**
 * After a successful Job: the voters restarted, then the read replicas (after-restore-plan.ts), with
 * the cluster's status.restore saying where it stands; then Completed with the receipt's
 * FollowThroughComplete. Each pass plans from what it observes, so a restarted operator goes on
 * from the same step.
 */
async function followThrough(
  m: RestoreCore,
  r0: OpenBaoRestore,
  finishedAt: Date | undefined,
  size: number | undefined,
  durationS: number | undefined,
  rc: ReconcileContext,
): Promise<ReconcileResult> {
  let r = r0;
  const ns = r.metadata.namespace!;
  const complete = (notReady?: string) =>
    m.finish(r, followThroughComplete(completed(r, m.now(), size, notReady), m.now()), { durationS }, rc);
  if (!finishedAt) {
    rc.log.warn(
      { job: r.status?.execution?.jobName ?? r.status?.jobName },
      "restore Job succeeded without a completion time; pods not restarted",
    );
    return complete();
  }
  const self = { name: r.metadata.name!, uid: r.metadata.uid ?? "" };
  // Each round acts on one step; a write to the cluster's record is planned on again at once.
  for (let round = 0; round < 4; round++) {
    const cluster = await m.d.client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, r.spec.cluster, ns);
    if (!cluster) return complete();
    const selector = openbaoPodSelector(r.spec.cluster);
    const [pods, sets] = await Promise.all([
      m.d.client.list(POD, { namespace: ns, labelSelector: selector }),
      m.d.client.list(STATEFULSET, { namespace: ns, labelSelector: selector }),
    ]);
    const step = planAfterRestore({
      restore: self,
      record: cluster.status?.restore,
      finishedAt,
      voters: poolOf(Component.Server, pods.items, sets.items),
      readReplicas: poolOf(Component.ReadReplica, pods.items, sets.items),
      now: m.now(),
      timeoutMs: m.afterRestoreTimeoutMs,
    });
    switch (step.kind) {
      case "record":
        await writeClusterRecord(
          m.d.client,
          cluster,
          { name: self.name, uid: restoreToken(self) },
          rc.signal,
        );
        continue;
      case "votersRestarted": {
        await writeClusterRecord(
          m.d.client,
          cluster,
          { name: self.name, uid: restoreToken(self), restartCompletedAt: stamp(step.at) },
          rc.signal,
        );
        const note: RestoreEvent = {
          type: "Normal",
          reason: OpenBaoRestoreReason.RestoreRestartCompleted,
          action: "RestartPods",
          note: "every voter is back and Ready after the snapshot",
        };
        m.event(r, note);
        m.d.events.record(cluster, note, OPENBAOCLUSTER);
        continue;
      }
      case "restart":
        await restartPods(m, r, cluster, step.pool, step.pods);
        r = await m.write(
          r,
          restarting(r, m.now(), `${restartedNote(step.pool, step.pods)}; waiting for them to be Ready`),
          rc,
        );
        return requeueAfter(Math.min(m.pollMs, PODS_BACK_POLL_MS));
      case "wait": {
        r = await m.write(r, restarting(r, m.now(), `waiting: ${step.message}`), rc);
        const untilDeadline = step.deadline.getTime() - m.now().getTime() + 250;
        return requeueAfter(Math.max(250, Math.min(m.pollMs, PODS_BACK_POLL_MS, untilDeadline)));
      }
      case "done":
        if (step.restart?.length) await restartPods(m, r, cluster, "readReplicas", step.restart);
        if (step.notReady) rc.log.warn({ notReady: step.notReady }, "restore completed with pods not Ready");
        return complete(step.notReady);
    }
  }
  // A record write that did not show on the next read: planned again on the next pass.
  return requeueAfter(Math.min(m.pollMs, PODS_BACK_POLL_MS));
}

const stamp = (d: Date) => isoSeconds(d);

function restartedNote(pool: Pool, pods: readonly PodFacts[]): string {
  const names = pods.map((p) => p.name).join(", ");
  return pool === "voters"
    ? `snapshot applied; restarted ${names} so that every node loads the restored data (seal-wrapped keys, Raft TLS keyring) from storage`
    : `voters back with the restored data; restarted the read replicas ${names} so that they follow the restored leader`;
}

/**
 * The Job has no result yet. Its pod may not have started: said in RestoreComplete at once with
 * the pod's reason, and past the start bound the restore fails (nothing was changed), the Job is
 * ended and the lock released, so no restore holds the cluster on a Job that never runs.
 */
async function whileRunning(
  m: RestoreCore,
  r: OpenBaoRestore,
  job: KubeObject,
  pods: readonly KubeObject[],
  rc: ReconcileContext,
): Promise<ReconcileResult> {
  const jobName = job.metadata.name!;
  const health = jobStartHealth(job, pods, m.now(), m.startTimeoutMs, r.status?.startTime);
  if (health.started) {
    await m.write(r, jobStarted(r, m.now(), jobName), rc);
    return requeueAfter(m.pollMs);
  }
  if (health.expired) {
    const failure = startTimeoutFailure(jobName, health, m.startTimeoutMs);
    await endUnstartedJob(m.d.client, job, failure);
    return m.finish(
      r,
      terminalObserved(
        failed(r, m.now(), OpenBaoRestoreReason.JobStartTimeout, failure.message, { unchanged: true }),
        m.now(),
        "Failed",
      ),
      { reason: OpenBaoRestoreReason.JobStartTimeout },
      rc,
    );
  }
  if (health.trouble) {
    const message = notStartedMessage(jobName, health);
    const was = r.status?.conditions?.find((c) => c.type === OpenBaoRestoreCondition.RestoreComplete);
    const written = await m.write(r, jobNotStarted(r, m.now(), message), rc);
    // One event when the trouble is first seen; the condition follows the pod after that.
    if (was?.reason !== OpenBaoRestoreReason.JobNotStarted && written !== r)
      m.event(written, {
        type: "Warning",
        reason: OpenBaoRestoreReason.JobNotStarted,
        action: "Restore",
        note: message,
      });
  }
  const untilDeadline = health.deadline.getTime() - m.now().getTime() + 250;
  return requeueAfter(Math.max(1000, Math.min(m.pollMs, untilDeadline)));
}

/**
 * Deletes `pods` (by uid: a newer pod of the same name is already restarted), with an event on the
 * restore and on its cluster saying which and why.
 */
async function restartPods(
  m: RestoreCore,
  r: OpenBaoRestore,
  cluster: OpenBaoCluster,
  pool: Pool,
  pods: readonly PodFacts[],
): Promise<void> {
  const ns = r.metadata.namespace!;
  for (const p of pods)
    await m.d.client
      .delete(POD, p.name, ns, p.uid ? { preconditions: { uid: p.uid } } : {})
      .catch((e: unknown) => {
        // Gone already, or replaced by a newer pod of the same name: either way not old any more.
        if (!isNotFound(e) && !isConflict(e)) throw e;
      });
  const note: RestoreEvent = {
    type: "Normal",
    reason:
      pool === "voters" ? OpenBaoRestoreReason.PodsRestarted : OpenBaoRestoreReason.ReadReplicasRestarted,
    action: "RestartPods",
    note: restartedNote(pool, pods),
  };
  m.event(r, note);
  m.d.events.record(cluster, note, OPENBAOCLUSTER);
}

/** The Job is this request's: controlled by an owner reference with the request's uid. */
export function ownedBy(job: KubeObject, r: OpenBaoRestore): boolean {
  return (job.metadata.ownerReferences ?? []).some((o) => o.uid === r.metadata.uid && o.controller === true);
}
