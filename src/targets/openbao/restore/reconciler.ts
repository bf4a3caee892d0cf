import { OpenBaoRestoreReason, type OpenBaoRestoreReasonType } from "../../../apis/openbaorestore-names.js";
/**
 * The OpenBaoRestore controller's pass. A restore is a state machine persisted in its status:
 * Pending → Validating → Running → Completed | Failed. Every step is idempotent and keyed by the
 * request (lock holder restore/<ns>/<name>, Job <name>-restore), so a restarted operator resumes
 * where the last one stopped without a second Job or a stolen lock. Terminal requests keep
 * reconciling until they no longer hold the cluster's lock.
 */

import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore, OpenBaoRestoreStatus } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreCondition, OpenBaoRestoreKind } from "../../../apis/openbaorestore-names.js";
import { JOB, POD, SECRET } from "../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../runtime/client.js";
import {
  done,
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
} from "../../../runtime/controller.js";
import { deepEqual } from "../../../runtime/converge.js";
import { errorMessage, isConflict, isNotFound } from "../../../runtime/errors.js";
import type { EventInput, KindEvents } from "../../../runtime/events.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../../runtime/finalizers.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Logger } from "../../../runtime/log.js";
import { StatusWriter } from "../../../runtime/status.js";
import type { KubeObject } from "../../../runtime/types.js";
import { endUnstartedJob } from "../adminops/jobs/end-unstarted.js";
import {
  DEFAULT_JOB_START_TIMEOUT_MS,
  jobStartHealth,
  notStartedMessage,
  startTimeoutFailure,
} from "../adminops/jobs/start-health.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";
import { contention, takeoverNote } from "../opslifecycle/contention.js";
import { OperationLockStore } from "../opslifecycle/lock-store.js";
import type { Lookup } from "../readiness/facts.js";
import { type RestoreReadiness, restoreConfiguration } from "../readiness/restore.js";
import { jobFinishedAt, openbaoPodSelector, podsToRestart, sealMismatchHint } from "./after-restore.js";
import { restoreDuration, restoreFailureTotal, restoreSuccessTotal, restoreTotal } from "./metrics.js";
import { restoreJobName, restoreLockIdentity } from "./names.js";
import type { RestoreJobOutcome, RestoreJobs, SnapshotProbe } from "./ports.js";
import {
  committed,
  created,
  followThroughComplete,
  isCommitted,
  lost,
  prepared,
  terminalObserved,
} from "./receipt.js";
import {
  completed,
  failed,
  isTerminal,
  jobNotStarted,
  jobStarted,
  lockWait,
  running,
  validating,
  withConfiguration,
} from "./status.js";
import { OPENBAORESTORE, RESTORE_API_VERSION, RESTORE_FIELD_MANAGER, RESTORE_FINALIZER } from "./types.js";

/** An event of the restore (recorded on it, and on its cluster where the cluster's side changed). */
type RestoreEvent = EventInput<OpenBaoRestoreReasonType>;

import {
  readyToProbe,
  restoreAuth,
  restoreTokenLabelsMissing,
  secretsToCheck,
  validateRestore,
} from "./validate.js";

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
   * Test seam, called after each status write: a test throws here to play an operator that stops
   * right after a receipt stage was recorded, then runs a fresh reconciler.
   */
  afterStatusWrite?: (written: OpenBaoRestoreStatus) => void;
}

const DEFAULT_POLL_MS = 15_000;

export class RestoreReconciler {
  private readonly memory: StatusWriter<OpenBaoRestoreStatus>;
  private readonly lock: OperationLockStore;
  private readonly now: () => Date;
  private readonly pollMs: number;
  private readonly startTimeoutMs: number;

  constructor(private readonly d: RestoreReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.lock = new OperationLockStore(d.client, { now: this.now });
    this.memory = new StatusWriter<OpenBaoRestoreStatus>({
      client: d.client,
      type: OPENBAORESTORE,
      fieldManager: RESTORE_FIELD_MANAGER,
    });
    this.pollMs = d.pollMs ?? DEFAULT_POLL_MS;
    this.startTimeoutMs = d.jobStartTimeoutMs ?? DEFAULT_JOB_START_TIMEOUT_MS;
  }

  async reconcile(key: string, rc: ReconcileContext): Promise<ReconcileResult> {
    const cached = this.d.restores.get(key);
    if (!cached) {
      this.memory.forget(key);
      return done();
    }
    // Informer items may come without apiVersion/kind; events and owner references need them.
    let r: OpenBaoRestore = {
      ...this.memory.freshest(key, cached),
      apiVersion: RESTORE_API_VERSION,
      kind: OpenBaoRestoreKind,
    };
    if (r.metadata.deletionTimestamp) return this.finalize(r, rc);
    r = {
      ...(await addFinalizer(this.d.client, OPENBAORESTORE, r, RESTORE_FINALIZER, rc.signal)),
      status: r.status,
    };
    const phase = r.status?.phase ?? "Pending";
    if (isTerminal(phase)) return this.releaseLock(r, rc);
    // Once committed to its Job (status.execution), a restore only ever observes that Job.
    if (phase === "Running" || isCommitted(r.status?.execution)) return this.observe(r, rc);
    return this.validate(r, rc);
  }

  private async validate(r0: OpenBaoRestore, rc: ReconcileContext): Promise<ReconcileResult> {
    let r = r0;
    const ns = r.metadata.namespace!;
    if ((r.status?.phase ?? "Pending") === "Pending")
      r = await this.write(
        r,
        validating(
          r,
          this.now(),
          OpenBaoRestoreReason.Validating,
          "checking target, snapshot and credentials",
        ),
        rc,
      );
    const cluster = await this.d.client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, r.spec.cluster, ns);
    const secrets = new Map<string, KubeObject>();
    for (const name of secretsToCheck(r, cluster)) {
      const s = await this.d.client.getOrUndefined(SECRET, name, ns);
      if (s) secrets.set(name, s);
    }
    if (cluster && !cluster.metadata.deletionTimestamp)
      r = withConfiguration(r, this.now(), configurationOf(r, cluster, secretsToCheck(r, cluster), secrets));
    const obs = {
      restore: r,
      cluster,
      secretsFound: new Set(secrets.keys()),
      secretLabels: new Map([...secrets].map(([name, s]) => [name, s.metadata.labels])),
    };
    let snapshot: Awaited<ReturnType<SnapshotProbe>> | Error | undefined;
    if (readyToProbe(obs)) {
      const credsName = r.spec.source.target.credentialsSecretRef?.name;
      const creds = credsName ? secretFiles(secrets.get(credsName)) : undefined;
      snapshot = await this.d
        .probe(r.spec.source.target, r.spec.source.key, creds, rc.signal)
        .catch((e: unknown) => (e instanceof Error ? e : new Error(errorMessage(e))));
    }
    const v = validateRestore({ ...obs, snapshot });
    if (v.kind === "fail")
      return this.finish(r, failed(r, this.now(), v.reason, v.message), { reason: v.reason }, rc);
    if (v.kind === "wait") {
      const before = r.status;
      r = await this.write(r, validating(r, this.now(), v.reason, v.message), rc);
      if (!deepEqual(before?.message, r.status?.message))
        this.event(r, { type: "Warning", reason: v.reason, action: "Validate", note: v.message });
      return requeueAfter(this.pollMs);
    }

    const ref: ClusterRef = { name: r.spec.cluster, namespace: ns };
    const id = restoreLockIdentity(r);
    let overridden: string | undefined;
    const got = await this.lock.acquire(ref, id, {
      message: `restore ${ns}/${r.metadata.name}`,
      signal: rc.signal,
    });
    if (!got.acquired) {
      if (r.spec.overrideOperationLock && r.spec.force) {
        const t = await this.lock.forceTakeover(
          ref,
          id,
          { kind: "restore-override", restore: `${ns}/${r.metadata.name}` },
          rc.signal,
        );
        overridden = takeoverNote(t.previous, id, "spec.overrideOperationLock with spec.force");
        const note: RestoreEvent = {
          type: "Warning",
          reason: OpenBaoRestoreReason.OperationLockOverridden,
          action: "TakeLock",
          note: overridden,
        };
        this.event(r, note);
        if (cluster) this.d.events.record(cluster, note, OPENBAOCLUSTER);
      } else {
        const c = contention(got.heldBy, id);
        const before = r.status?.message;
        r = await this.write(r, lockWait(r, this.now(), c.message), rc);
        if (before !== r.status?.message)
          this.event(r, {
            type: c.eventType,
            reason: OpenBaoRestoreReason.OperationLockHeld,
            action: "TakeLock",
            note: c.message,
          });
        return requeueAfter(c.requeueAfterMs);
      }
    }

    // The lock is ours: the one Job, found again if an earlier pass made it.
    const jobName = restoreJobName(r);
    let job = await this.d.client.getOrUndefined(JOB, jobName, ns);
    if (job && !ownedBy(job, r))
      return this.finish(
        r,
        failed(
          r,
          this.now(),
          OpenBaoRestoreReason.JobConflict,
          `a Job named ${jobName} exists and does not belong to this OpenBaoRestore`,
        ),
        { reason: OpenBaoRestoreReason.JobConflict },
        rc,
      );
    if (!job) {
      const verified = await this.d.jobs.image?.(r, cluster!, rc.signal);
      if (verified && !verified.ok)
        return this.finish(
          r,
          failed(r, this.now(), verified.reason, verified.message),
          { reason: verified.reason },
          rc,
        );
      let intent: KubeObject;
      try {
        intent = this.d.jobs.build(r, cluster!, jobName, verified?.image);
      } catch (e) {
        // A request the builder cannot turn into a Job (e.g. no executor image anywhere) never will.
        const msg = errorMessage(e);
        return this.finish(
          r,
          failed(r, this.now(), OpenBaoRestoreReason.InvalidRequest, msg),
          { reason: OpenBaoRestoreReason.InvalidRequest },
          rc,
        );
      }
      // The receipt comes first: Prepared (built, nothing created), then Committed, recorded before
      // the create call, so no later pass or restarted operator ever creates a second Job.
      r = await this.write(r, prepared(r, this.now(), jobName), rc);
      await this.d.jobs.prepare?.(r, cluster!, rc.signal);
      r = await this.write(r, committed(r, this.now()), rc);
      try {
        job = await this.d.client.create(JOB, intent);
        this.event(r, {
          type: "Normal",
          reason: OpenBaoRestoreReason.JobCreated,
          action: "CreateJob",
          note: `restore Job ${jobName} created`,
        });
      } catch (e) {
        if (!isConflict(e)) throw e;
        job = await this.d.client.getOrUndefined(JOB, jobName, ns);
      }
    }
    const withJob: OpenBaoRestore = {
      ...r,
      status: r.status?.execution
        ? created(r, this.now(), job?.metadata.uid)
        : // A Job of this request found without a receipt (made before receipts): recorded as created.
          created({ ...r, status: prepared(r, this.now(), jobName) }, this.now(), job?.metadata.uid),
    };
    await this.write(
      r,
      running(withJob, this.now(), { jobName, size: v.size, overridden, forced: v.forced }),
      rc,
    );
    return requeueAfter(this.pollMs);
  }

  private async observe(r0: OpenBaoRestore, rc: ReconcileContext): Promise<ReconcileResult> {
    let r = r0;
    const ns = r.metadata.namespace!;
    const exec = r.status?.execution;
    const jobName = exec?.jobName ?? r.status?.jobName ?? restoreJobName(r);
    // Renewal keeps the lock's audit fields current; a holder change here means another restore
    // overrode it, which the message says, while this Job is still observed to its end.
    const ref: ClusterRef = { name: r.spec.cluster, namespace: ns };
    const held = await this.lock
      .acquire(ref, restoreLockIdentity(r), { signal: rc.signal })
      .catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
    if (held && !held.acquired)
      rc.log.warn({ holder: held.heldBy.holder }, "the operation lock was taken from this running restore");
    const job = await this.d.client.getOrUndefined(JOB, jobName, ns);
    if (!job) {
      // Its success was seen before it went (TTL, garbage collection): the follow-through goes on.
      if (
        exec?.stage === "TerminalObserved" &&
        exec.terminalResult === "Succeeded" &&
        exec.terminalObservedAt
      )
        return this.followThrough(r, new Date(exec.terminalObservedAt), undefined, undefined, rc);
      // Committed and gone: reported (phase Unknown), never created again.
      return this.finish(r, lost(r, this.now(), jobName), { reason: OpenBaoRestoreReason.JobMissing }, rc);
    }
    if (job && !ownedBy(job, r))
      return this.finish(
        r,
        failed(
          r,
          this.now(),
          OpenBaoRestoreReason.JobConflict,
          `a Job named ${jobName} exists and does not belong to this OpenBaoRestore`,
        ),
        { reason: OpenBaoRestoreReason.JobConflict },
        rc,
      );
    // The operator stopped between committing and recording the Job: recorded now, from the Job.
    if (exec?.stage === "Committed" || r.status?.phase !== "Running")
      r = await this.write(
        r,
        running({ ...r, status: created(r, this.now(), job.metadata.uid) }, this.now(), {
          jobName,
          forced: [],
        }),
        rc,
      );
    const pods = await this.d.client.list(POD, { namespace: ns, labelSelector: `job-name=${jobName}` });
    const outcome: RestoreJobOutcome = this.d.jobs.outcome(job, pods.items);
    if (outcome.state === "running") return this.whileRunning(r, job, pods.items, rc);
    const startedMs = Date.parse(r.status?.startTime ?? "");
    const durationS =
      outcome.state === "succeeded" && outcome.durationMs !== undefined
        ? outcome.durationMs / 1000
        : Number.isFinite(startedMs)
          ? (this.now().getTime() - startedMs) / 1000
          : undefined;
    if (outcome.state === "succeeded") {
      if (r.status?.execution?.stage !== "TerminalObserved")
        r = await this.write(r, terminalObserved(r.status ?? {}, this.now(), "Succeeded"), rc);
      return this.followThrough(r, jobFinishedAt(job), outcome.size, durationS, rc);
    }
    if (outcome.reason === OpenBaoRestoreReason.SealMismatch) {
      // OpenBao checked the seal before touching anything: say what the target needs, not "follow up".
      const cluster = await this.d.client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, r.spec.cluster, ns);
      return this.finish(
        r,
        terminalObserved(
          failed(r, this.now(), outcome.reason, `${outcome.message}: ${sealMismatchHint(cluster)}`, {
            unchanged: true,
          }),
          this.now(),
          "Failed",
        ),
        { reason: outcome.reason, durationS },
        rc,
      );
    }
    return this.finish(
      r,
      terminalObserved(failed(r, this.now(), outcome.reason, outcome.message), this.now(), "Failed"),
      { reason: outcome.reason, durationS },
      rc,
    );
  }

  /**
   * After a successful Job: every OpenBao pod from before the snapshot's application restarted,
   * then Completed with the receipt's FollowThroughComplete.
   */
  private async followThrough(
    r: OpenBaoRestore,
    finishedAt: Date | undefined,
    size: number | undefined,
    durationS: number | undefined,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const restarted = await this.restartPods(r, finishedAt, rc);
    if (restarted === "waiting") return requeueAfter(Math.min(this.pollMs, 2000));
    return this.finish(
      r,
      followThroughComplete(completed(r, this.now(), size), this.now()),
      { durationS },
      rc,
    );
  }

  /**
   * The Job has no result yet. Its pod may not have started: said in RestoreComplete at once with
   * the pod's reason, and past the start bound the restore fails (nothing was changed), the Job is
   * ended and the lock released, so no restore holds the cluster on a Job that never runs.
   */
  private async whileRunning(
    r: OpenBaoRestore,
    job: KubeObject,
    pods: readonly KubeObject[],
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const jobName = job.metadata.name!;
    const health = jobStartHealth(job, pods, this.now(), this.startTimeoutMs, r.status?.startTime);
    if (health.started) {
      await this.write(r, jobStarted(r, this.now(), jobName), rc);
      return requeueAfter(this.pollMs);
    }
    if (health.expired) {
      const failure = startTimeoutFailure(jobName, health, this.startTimeoutMs);
      await endUnstartedJob(this.d.client, job, failure);
      return this.finish(
        r,
        terminalObserved(
          failed(r, this.now(), OpenBaoRestoreReason.JobStartTimeout, failure.message, { unchanged: true }),
          this.now(),
          "Failed",
        ),
        { reason: OpenBaoRestoreReason.JobStartTimeout },
        rc,
      );
    }
    if (health.trouble) {
      const message = notStartedMessage(jobName, health);
      const was = r.status?.conditions?.find((c) => c.type === OpenBaoRestoreCondition.RestoreComplete);
      const written = await this.write(r, jobNotStarted(r, this.now(), message), rc);
      // One event when the trouble is first seen; the condition follows the pod after that.
      if (was?.reason !== OpenBaoRestoreReason.JobNotStarted && written !== r)
        this.event(written, {
          type: "Warning",
          reason: OpenBaoRestoreReason.JobNotStarted,
          action: "Restore",
          note: message,
        });
    }
    const untilDeadline = health.deadline.getTime() - this.now().getTime() + 250;
    return requeueAfter(Math.max(1000, Math.min(this.pollMs, untilDeadline)));
  }

  /**
   * Restarts every OpenBao pod of the cluster that predates the snapshot's application (see
   * after-restore.ts for why all of them). "waiting" while some were just deleted; "done" once none
   * is older than the Job's end, which a restarted operator finds again from the pods alone.
   */
  private async restartPods(
    r: OpenBaoRestore,
    finishedAt: Date | undefined,
    rc: ReconcileContext,
  ): Promise<"done" | "waiting"> {
    const ns = r.metadata.namespace!;
    if (!finishedAt) {
      rc.log.warn(
        { job: r.status?.execution?.jobName ?? r.status?.jobName },
        "restore Job succeeded without a completion time; pods not restarted",
      );
      return "done";
    }
    const pods = await this.d.client.list(POD, {
      namespace: ns,
      labelSelector: openbaoPodSelector(r.spec.cluster),
    });
    const old = podsToRestart(pods.items, finishedAt);
    if (old.length === 0) return "done";
    for (const p of old)
      await this.d.client
        .delete(POD, p.metadata.name!, ns, { preconditions: { uid: p.metadata.uid } })
        .catch((e: unknown) => {
          // Gone already, or replaced by a newer pod of the same name: either way not old any more.
          if (!isNotFound(e) && !isConflict(e)) throw e;
        });
    const names = old.map((p) => p.metadata.name).join(", ");
    const note: RestoreEvent = {
      type: "Normal",
      reason: OpenBaoRestoreReason.PodsRestarted,
      action: "RestartPods",
      note: `snapshot applied; restarted ${names} so that every node loads the restored data (seal-wrapped keys, Raft TLS keyring) from storage`,
    };
    this.event(r, note);
    const cluster = await this.d.client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, r.spec.cluster, ns);
    if (cluster) this.d.events.record(cluster, note, OPENBAOCLUSTER);
    return "waiting";
  }

  /** Records the terminal phase once (status, event, metrics), then releases the lock. */
  private async finish(
    r: OpenBaoRestore,
    next: OpenBaoRestoreStatus,
    m: { reason?: string; durationS?: number },
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const written = await this.write(r, next, rc);
    const labels = { namespace: r.metadata.namespace!, cluster: r.spec.cluster };
    restoreTotal.inc(labels);
    if (next.phase === "Completed") restoreSuccessTotal.inc(labels);
    else restoreFailureTotal.inc({ ...labels, reason: m.reason ?? "Unknown" });
    if (m.durationS !== undefined) restoreDuration.observe(labels, m.durationS);
    this.event(written, {
      type: next.phase === "Completed" ? "Normal" : "Warning",
      reason:
        next.phase === "Completed"
          ? OpenBaoRestoreReason.RestoreSucceeded
          : OpenBaoRestoreReason.RestoreFailed,
      action: "Restore",
      note: next.message ?? "",
    });
    return this.releaseLock(written, rc);
  }

  private async releaseLock(r: OpenBaoRestore, rc: ReconcileContext): Promise<ReconcileResult> {
    const ref: ClusterRef = { name: r.spec.cluster, namespace: r.metadata.namespace! };
    try {
      const out = await this.lock.release(ref, restoreLockIdentity(r), rc.signal);
      if (out.released && out.wrote) rc.log.info({ cluster: r.spec.cluster }, "operation lock released");
    } catch (e) {
      // No cluster, no lock to hold.
      if (!isNotFound(e)) throw e;
    }
    return done();
  }

  private async finalize(r: OpenBaoRestore, rc: ReconcileContext): Promise<ReconcileResult> {
    if (!hasFinalizer(r, RESTORE_FINALIZER)) return done();
    await this.releaseLock(r, rc);
    await removeFinalizer(this.d.client, OPENBAORESTORE, r, RESTORE_FINALIZER, rc.signal);
    return done();
  }

  private async write(
    r: OpenBaoRestore,
    next: OpenBaoRestoreStatus,
    rc: ReconcileContext,
  ): Promise<OpenBaoRestore> {
    const written = await this.memory.write(r, next, { signal: rc.signal });
    this.d.afterStatusWrite?.(next);
    if (!written) return r;
    rc.log.debug({ phase: next.phase }, "restore status written");
    return { ...r, metadata: written.metadata, status: written.status };
  }

  private event(r: OpenBaoRestore, e: RestoreEvent): void {
    this.d.events.record(r, e, OPENBAORESTORE);
  }
}

/** The Job is this request's: controlled by an owner reference with the request's uid. */
function ownedBy(job: KubeObject, r: OpenBaoRestore): boolean {
  return (job.metadata.ownerReferences ?? []).some((o) => o.uid === r.metadata.uid && o.controller === true);
}

/** RestoreConfigurationReady from what this pass read: the Secrets looked up, found or not. */
function configurationOf(
  r: OpenBaoRestore,
  c: OpenBaoCluster,
  names: readonly string[],
  found: ReadonlyMap<string, KubeObject>,
): RestoreReadiness {
  const labels = new Map([...found].map(([name, s]) => [name, s.metadata.labels]));
  return restoreConfiguration(r, c, {
    auth: restoreAuth(r, c),
    tokenLabelsMissing: restoreTokenLabelsMissing(r, labels),
    secrets: new Map<string, Lookup>(names.map((n) => [n, found.get(n) ?? "missing"])),
  });
}

/** A Secret's data as files (key → bytes). The values stay in memory; they are never logged. */
function secretFiles(s: KubeObject | undefined): Record<string, Buffer> | undefined {
  const data = s?.["data"] as Record<string, string> | undefined;
  if (!data) return undefined;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64")]));
}
