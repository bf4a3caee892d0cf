import { OpenBaoRestoreReason } from "../../../apis/openbaorestore-names.js";
/**
 * The OpenBaoRestore controller's pass. A restore is a state machine persisted in its status:
 * Pending → Validating → Running → Completed | Failed. Every step is idempotent and keyed by the
 * request (lock holder restore/<ns>/<name>, Job <name>-restore), so a restarted operator resumes
 * where the last one stopped without a second Job or a stolen lock. Terminal requests keep
 * reconciling until they no longer hold the cluster's lock.
 */

import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore, OpenBaoRestoreStatus } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreKind } from "../../../apis/openbaorestore-names.js";
import { JOB, SECRET } from "../../../runtime/builtin-types.js";
import {
  done,
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
} from "../../../runtime/controller.js";
import { deepEqual } from "../../../runtime/converge.js";
import { errorMessage, isConflict, isNotFound } from "../../../runtime/errors.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../../runtime/finalizers.js";
import { fail } from "../../../runtime/stages.js";
import { withGiveUp } from "../../../runtime/stages-attempts.js";
import { stageResult } from "../../../runtime/stages-settle.js";
import { StatusWriter } from "../../../runtime/status.js";
import type { KubeObject } from "../../../runtime/types.js";
import { DEFAULT_JOB_START_TIMEOUT_MS } from "../adminops/jobs/start-health.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";
import { contention, takeoverNote } from "../opslifecycle/contention.js";
import { OperationLockStore } from "../opslifecycle/lock-store.js";
import type { Lookup } from "../readiness/facts.js";
import { type RestoreReadiness, restoreConfiguration } from "../readiness/restore.js";
import {
  DEFAULT_AFTER_RESTORE_TIMEOUT_MS,
  finishOnForeignJob,
  type RestoreCore,
  type RestoreEvent,
  type RestoreReconcilerDeps,
} from "./core.js";
import { isSuspended, resumeJob, suspended } from "./job-suspend.js";
import { observe, ownedBy } from "./job-watch.js";
import { restoreDuration, restoreFailureTotal, restoreSuccessTotal, restoreTotal } from "./metrics.js";
import { restoreJobName, restoreLockIdentity } from "./names.js";
import type { SnapshotProbe } from "./ports.js";
import { committed, created, isCommitted, prepared } from "./receipt.js";
import { failed, isTerminal, lockWait, running, validating, withConfiguration } from "./status.js";
import { OPENBAORESTORE, RESTORE_API_VERSION, RESTORE_FIELD_MANAGER, RESTORE_FINALIZER } from "./types.js";

export type { RestoreReconcilerDeps };

import {
  readyToProbe,
  restoreAuth,
  restoreTokenLabelsMissing,
  secretsToCheck,
  validateRestore,
} from "./validate.js";

const DEFAULT_POLL_MS = 15_000;

/**
 * Passes in a row whose preparation of the Job (its ServiceAccount) failed before the restore gives
 * up. The runtime backs them off from 5 s, doubling: seven span about five minutes, the default
 * bound for a Job's pod to start, and a restore must not hold its cluster's lock for longer on a
 * Job it cannot even create.
 */
export const PREPARE_ATTEMPTS = 7;

export class RestoreReconciler implements RestoreCore {
  private readonly memory: StatusWriter<OpenBaoRestoreStatus>;
  readonly lock: OperationLockStore;
  readonly now: () => Date;
  readonly pollMs: number;
  readonly startTimeoutMs: number;
  readonly afterRestoreTimeoutMs: number;

  constructor(readonly d: RestoreReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.lock = new OperationLockStore(d.client, { now: this.now });
    this.memory = new StatusWriter<OpenBaoRestoreStatus>({
      client: d.client,
      type: OPENBAORESTORE,
      fieldManager: RESTORE_FIELD_MANAGER,
      cache: d.restores,
    });
    this.pollMs = d.pollMs ?? DEFAULT_POLL_MS;
    this.startTimeoutMs = d.jobStartTimeoutMs ?? DEFAULT_JOB_START_TIMEOUT_MS;
    this.afterRestoreTimeoutMs = d.afterRestoreTimeoutMs ?? DEFAULT_AFTER_RESTORE_TIMEOUT_MS;
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
    if (phase === "Running" || isCommitted(r.status?.execution)) return observe(this, r, rc);
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
    if (job && !ownedBy(job, r)) return finishOnForeignJob(this, r, jobName, rc);
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
      // The receipt comes first: Prepared (built, nothing created). The Job is then created
      // suspended (no pod can run), Committed is recorded with its uid, and only then is it resumed:
      // a restore Job that ever ran was committed first, and a committed restore whose Job is gone
      // had it deleted — never "not created yet" — so nothing is created twice and nothing is left
      // undone by a crash between the two writes.
      r = await this.write(r, prepared(r, this.now(), jobName), rc);
      try {
        await this.d.jobs.prepare?.(r, cluster!, rc.signal);
      } catch (e) {
        rc.signal.throwIfAborted();
        return this.prepareFailed(r, e, rc);
      }
      try {
        job = await this.d.client.create(JOB, suspended(intent));
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
    if (job && isSuspended(job) && !isCommitted(r.status?.execution)) {
      // Created suspended by this pass or by one that stopped before committing: committed now,
      // with the uid of the one Job that may run.
      r = await this.write(r, committed(r, this.now(), job.metadata.uid), rc);
      job = await resumeJob(this.d.client, job);
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

  /**
   * The Job's prerequisites could not be made. Retried with the runtime's failure backoff; after
   * PREPARE_ATTEMPTS passes in a row (the runtime's per-key count: an operator restart starts it
   * again, which only delays the give-up) the restore fails, nothing changed, and its lock goes back.
   */
  private async prepareFailed(
    r: OpenBaoRestore,
    error: unknown,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const reason = OpenBaoRestoreReason.JobPrepareFailed;
    const stop = { ...fail(reason, error, { giveUpAfter: PREPARE_ATTEMPTS }), stage: "prepare" };
    const attempts = (rc.failures ?? 0) + 1;
    const final = withGiveUp(stop, { stage: stop.stage, reason, attempts });
    const message = `preparing restore Job ${restoreJobName(r)}: ${stop.message}`;
    if (final.kind === "invalid")
      return this.finish(
        r,
        failed(r, this.now(), reason, `${message} (gave up after ${attempts} attempts)`),
        { reason },
        rc,
      );
    await this.write(
      r,
      validating(r, this.now(), reason, `${message} (attempt ${attempts} of ${PREPARE_ATTEMPTS})`),
      rc,
    );
    rc.log.warn(
      { reason, err: stop.message, attempt: attempts },
      "restore Job preparation failed; will retry",
    );
    return stageResult(stop, { waitAfterMs: this.pollMs });
  }

  /** Records the terminal phase once (status, event, metrics), then releases the lock. */
  async finish(
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

  async write(r: OpenBaoRestore, next: OpenBaoRestoreStatus, rc: ReconcileContext): Promise<OpenBaoRestore> {
    const written = await this.memory.write(r, next, { signal: rc.signal });
    this.d.afterStatusWrite?.(next);
    if (!written) return r;
    rc.log.debug({ phase: next.phase }, "restore status written");
    return { ...r, metadata: written.metadata, status: written.status };
  }

  event(r: OpenBaoRestore, e: RestoreEvent): void {
    this.d.events.record(r, e, OPENBAORESTORE);
  }
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
