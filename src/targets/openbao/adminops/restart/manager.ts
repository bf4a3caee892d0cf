/**
 * spec.runtime.restartAt: one rolling restart of the voter pods per new value, driven by the operator
 * rather than by a pod-template annotation (which the StatefulSet controller would roll in ordinal
 * order, the leader whenever its ordinal comes). Standbys go first, one at a time, each replacement
 * waited for until it is Ready and unsealed with Raft healthy; the leader is stepped down and goes
 * last. The operation lock is held throughout, so no backup, upgrade or restore runs on a cluster
 * that is half restarted.
 *
 * Everything a pass needs is in status.runtimeRestart (the pods to replace, by UID; the last
 * step-down), so a restarted operator resumes where the dead one stopped. A failed step (OpenBao
 * unreachable, a step-down refused, no token) is retried with the runtime's failure backoff and counted
 * in status, never given up (as upstream's roll): from the third failure in a row Restarting says
 * RestartStalled with the count. Waiting for a pod is not a failure and has no deadline (the condition
 * says what is awaited).
 */

import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../apis/openbaocluster-names.js";
import { POD } from "../../../../runtime/builtin-types.js";
import { type CachedReader, liveReader } from "../../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../../runtime/client.js";
import type { ReconcileResult } from "../../../../runtime/controller.js";
import { errorMessage, isConflict, isNotFound } from "../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import type { Informer } from "../../../../runtime/informer.js";
import { AT_ONCE_MS, fail, type StageStop, wait } from "../../../../runtime/stages.js";
import { stageResult } from "../../../../runtime/stages-settle.js";
import { splitKey } from "../../../../runtime/types.js";
import { OPENBAOCLUSTER, refOf } from "../../cluster-ref.js";
import {
  type AdminOpsContext,
  commitBeforeRelease,
  contention,
  type InAdminOpsPass,
  OperationLockStore,
  withAdminOpsPass,
} from "../../opslifecycle/index.js";
import { type BaoAccess, observeCluster, STEP_DOWN_POLL_MS, voterClient } from "../upgrade/core/observe.js";
import { forgetUpgradeLogin, upgradeToken } from "../upgrade/core/token.js";
import {
  type PodFacts,
  planRestart,
  podsToRestart,
  type RestartStep,
  type RuntimeRestartStatus,
  restartCutoff,
} from "./plan.js";
import {
  clearRestartFailures,
  failedStepCondition,
  restartLock,
  setRestarting,
  stageRestart,
  stamp,
  voterPods,
} from "./stage.js";

export { restartLock };

export interface RestartOptions {
  /** After a step-down, how long to wait for another leader before asking again (default 20 s). */
  stepDownSettleMs?: number;
  /**
   * How soon a waiting pass looks again (default 5 s). Pod changes wake it sooner; what they do not
   * show (a replacement unsealed, Raft healthy again: OpenBao's own state) has no watch, so it is polled.
   */
  waitPollMs?: number;
}

/** How a restart pass ends: done, or a stop the kernel turns into the result (stageResult). */
type RestartEnd = { kind: "done" } | StageStop<OpenBaoClusterReasonType>;
const DONE: RestartEnd = { kind: "done" };

export interface RuntimeRestartDeps {
  client: KubeClient;
  events: EventRecorder;
  /** Only asked whether the cluster still exists; decisions use a fresh read. */
  clusters: Pick<Informer<OpenBaoCluster>, "get">;
  reader?: Pick<CachedReader, "get">;
  access: BaoAccess;
  now?: () => Date;
  options?: RestartOptions;
}

/** A failed step and the reason it is reported with. */
class StepError extends Error {
  constructor(
    readonly reason: OpenBaoClusterReasonType,
    message: string,
  ) {
    super(message);
  }
}

export class RuntimeRestart {
  private readonly now: () => Date;
  private readonly locks: OperationLockStore;
  private readonly o: Required<RestartOptions>;

  constructor(private readonly d: RuntimeRestartDeps) {
    this.now = d.now ?? (() => new Date());
    this.locks = new OperationLockStore(d.client, { now: this.now });
    this.o = { stepDownSettleMs: 20_000, waitPollMs: 5_000, ...(d.options ?? {}) };
  }

  async reconcile(key: string, rc: AdminOpsContext): Promise<ReconcileResult> {
    const { namespace = "", name } = splitKey(key);
    return withAdminOpsPass(this.d.client, { namespace, name }, rc, async (pass) =>
      // No retry schedule here: waits and failures become the result in the kernel, failures with
      // the runtime's backoff, counted as errors.
      stageResult(await this.pass(key, pass), { waitAfterMs: this.o.waitPollMs }),
    );
  }

  /** One pass; its status changes are staged in the AdminOps pass and committed once. */
  private async pass(key: string, rc: InAdminOpsPass): Promise<RestartEnd> {
    const { namespace = "", name } = splitKey(key);
    const cached = this.d.clusters.get(key);
    if (!cached || cached.metadata.deletionTimestamp) return DONE;
    // Cheap exits for the common cases, from the cache and without a request: no request and
    // nothing left of an earlier one, or the requested restart already completed (a newer value
    // reaches the cache with the event that brings the next pass).
    const asked = cached.spec.runtime?.restartAt?.trim() ?? "";
    const last = cached.status?.runtimeRestart;
    if (!asked && !last) return DONE;
    if (asked && last?.restartAt === asked && last.completedAt) return DONE;
    const cluster = await (this.d.reader ?? liveReader(this.d.client)).get<OpenBaoCluster>(
      OPENBAOCLUSTER,
      name,
      namespace,
    );
    if (!cluster || cluster.metadata.deletionTimestamp) return DONE;
    const want = cluster.spec.runtime?.restartAt?.trim() ?? "";
    const rec = cluster.status?.runtimeRestart;
    if (rec && !rec.completedAt && rec.restartAt !== want) return this.abandon(cluster, rec, want, rc);
    if (!want || (rec?.restartAt === want && rec.completedAt)) return DONE;
    // Before initialization there is nothing to restart yet; initialization wakes the pass.
    if (cluster.status?.initialized !== true) return DONE;
    if (cluster.spec.paused) {
      await setRestarting(
        this.d.events,
        this.now(),
        cluster,
        "False",
        R.Paused,
        "spec.paused: the restart waits",
        rc,
      );
      return DONE;
    }
    const ref = refOf(cluster);
    const id = restartLock(ref.name, want);
    const got = await this.locks.acquire(ref, id, { message: "runtime restart", signal: rc.signal });
    if (!got.acquired) {
      const c = contention(got.heldBy, id);
      await setRestarting(this.d.events, this.now(), cluster, "False", c.reason, c.message, rc);
      return wait(c.reason, c.message, { afterMs: c.requeueAfterMs, by: "stalled" });
    }
    // What an earlier half of this pass staged is replayed on the lock's write (no lost race).
    rc.adminOps.observed(got.cluster);
    try {
      return await this.step(cluster, want, rec?.restartAt === want ? rec : undefined, rc);
    } catch (e) {
      rc.signal.throwIfAborted();
      forgetUpgradeLogin(cluster);
      const reason = e instanceof StepError ? e.reason : R.RestartStepFailed;
      return this.failedStep(cluster, want, reason, e, rc);
    }
  }

  private async step(
    cluster: OpenBaoCluster,
    want: string,
    rec: RuntimeRestartStatus | undefined,
    rc: InAdminOpsPass,
  ): Promise<RestartEnd> {
    const token = await upgradeToken(this.d.client, this.d.access, cluster, this.now, rc.signal);
    if (!token)
      throw new StepError(
        R.AuthenticationRequired,
        "no OpenBao token for the Raft reads and step-down (spec.upgrade.jwtAuthRole, spec.upgrade.tokenSecretRef or the root-token Secret)",
      );
    const obs = await observeCluster(this.d.client, this.d.access, cluster, token, rc.signal);
    const pods = await voterPods(this.d.client, cluster);
    const now = this.now();
    if (!rec) return this.begin(cluster, want, pods, now, rc);
    const step = planRestart({ record: rec, obs, pods, now, stepDownSettleMs: this.o.stepDownSettleMs });
    const end = await this.act(cluster, want, rec, step, token, rc);
    // Cleared once a step went through, not before it runs: a step that fails again counts on.
    if (step.kind !== "wait" && rec.consecutiveFailures) await clearRestartFailures(cluster, want, rc);
    return end;
  }

  private async begin(
    cluster: OpenBaoCluster,
    want: string,
    pods: ReadonlyMap<string, PodFacts>,
    now: Date,
    rc: InAdminOpsPass,
  ): Promise<RestartEnd> {
    const cutoff = restartCutoff(want, now);
    const pending = podsToRestart(pods.values(), cutoff);
    await stageRestart(cluster, rc, (cur) =>
      cur?.restartAt === want
        ? cur
        : {
            restartAt: want,
            startedAt: stamp(now),
            cutoff: stamp(cutoff),
            pendingPods: pending,
            restartedPods: [],
          },
    );
    const message = pending.length
      ? `restarting ${pending.length} pod(s) started before ${stamp(cutoff)}, one at a time, the leader last`
      : `no pod started before ${stamp(cutoff)}: nothing to restart`;
    // The next pass plans from the record just staged.
    return this.inProgress(cluster, message, rc, { afterMs: AT_ONCE_MS });
  }

  private async act(
    cluster: OpenBaoCluster,
    want: string,
    rec: RuntimeRestartStatus,
    step: RestartStep,
    token: string,
    rc: InAdminOpsPass,
  ): Promise<RestartEnd> {
    const progress = `${(rec.restartedPods ?? []).length} of ${(rec.restartedPods ?? []).length + (rec.pendingPods ?? []).length} pod(s) restarted`;
    switch (step.kind) {
      case "wait":
        return this.inProgress(cluster, `${progress}: ${step.message}`, rc);
      case "record-replaced":
        await stageRestart(cluster, rc, (cur) =>
          cur?.restartAt === want
            ? {
                ...cur,
                pendingPods: step.remaining,
                restartedPods: [...(cur.restartedPods ?? []), ...step.replaced].slice(-512),
              }
            : cur,
        );
        return wait(R.RestartInProgress, `${progress}: recorded ${step.replaced.join(", ")} as restarted`, {
          afterMs: AT_ONCE_MS,
        });
      case "delete": {
        try {
          await this.d.client.delete(POD, step.pod.name, refOf(cluster).namespace, {
            preconditions: { uid: step.pod.uid },
          });
        } catch (e) {
          // Already gone, or already replaced (another UID): the next observation says which.
          if (!isNotFound(e) && !isConflict(e)) throw e;
        }
        this.d.events.record(cluster, {
          type: "Normal",
          reason: R.RestartPodDeleted,
          action: "Restart",
          note: `spec.runtime.restartAt: pod ${step.pod.name}${step.leader ? " (the leader, no other voter to hand over to)" : ""} deleted to be restarted`,
        });
        return this.inProgress(cluster, `${progress}: restarting pod ${step.pod.name}`, rc);
      }
      case "step-down": {
        try {
          const bao = await voterClient(this.d.client, this.d.access, cluster, step.ordinal);
          await bao.stepDown(token, rc.signal);
        } catch (e) {
          rc.signal.throwIfAborted();
          throw new StepError(R.StepDownFailed, `step-down of ${step.pod.name}: ${errorMessage(e)}`);
        }
        const now = this.now();
        await stageRestart(cluster, rc, (cur) =>
          cur?.restartAt === want ? { ...cur, lastStepDownTime: stamp(now) } : cur,
        );
        this.d.events.record(cluster, {
          type: "Normal",
          reason: R.LeaderSteppedDown,
          action: "Restart",
          note: `asked the leader ${step.pod.name} to step down before it is restarted`,
        });
        return this.inProgress(cluster, `${progress}: leader ${step.pod.name} stepping down`, rc, {
          afterMs: STEP_DOWN_POLL_MS,
        });
      }
      case "finalize":
        return this.finalize(cluster, want, rec, rc);
    }
  }

  private async finalize(
    cluster: OpenBaoCluster,
    want: string,
    rec: RuntimeRestartStatus,
    rc: InAdminOpsPass,
  ): Promise<RestartEnd> {
    const now = this.now();
    await stageRestart(cluster, rc, (cur) => {
      if (cur?.restartAt !== want || cur.completedAt) return cur;
      const { consecutiveFailures: _n, lastErrorReason: _r, lastErrorMessage: _m, ...rest } = cur;
      return { ...rest, pendingPods: [], completedAt: stamp(now) };
    });
    const n = (rec.restartedPods ?? []).length;
    const started = rec.startedAt ? Date.parse(rec.startedAt) : Number.NaN;
    const took = Number.isFinite(started) ? ` in ${Math.round((now.getTime() - started) / 1000)}s` : "";
    await setRestarting(
      this.d.events,
      this.now(),
      cluster,
      "False",
      R.RestartComplete,
      n ? `restarted ${n} pod(s)${took}: ${(rec.restartedPods ?? []).join(", ")}` : "no pod needed a restart",
      rc,
    );
    await commitBeforeRelease(rc);
    await this.locks.release(refOf(cluster), restartLock(refOf(cluster).name, want), rc.signal);
    return DONE;
  }

  /** The request changed or was removed mid-restart: the old one ends where it is and gives the lock back. */
  private async abandon(
    cluster: OpenBaoCluster,
    rec: RuntimeRestartStatus,
    want: string,
    rc: InAdminOpsPass,
  ): Promise<RestartEnd> {
    const ref = refOf(cluster);
    await stageRestart(cluster, rc, (cur) =>
      cur && cur.restartAt === rec.restartAt && !cur.completedAt ? undefined : cur,
    );
    await commitBeforeRelease(rc);
    await this.locks.release(ref, restartLock(ref.name, rec.restartAt ?? ""), rc.signal);
    if (!want)
      await setRestarting(
        this.d.events,
        this.now(),
        cluster,
        "False",
        R.RestartComplete,
        `spec.runtime.restartAt was removed: the restart stopped with ${(rec.restartedPods ?? []).length} pod(s) restarted`,
        rc,
      );
    // The next pass starts the new request, if any, from a clean record.
    return wait(R.RestartComplete, "the earlier restart request ended", { afterMs: AT_ONCE_MS });
  }

  private async failedStep(
    cluster: OpenBaoCluster,
    want: string,
    reason: OpenBaoClusterReasonType,
    error: unknown,
    rc: InAdminOpsPass,
  ): Promise<RestartEnd> {
    const message = errorMessage(error);
    let n = 1;
    await stageRestart(cluster, rc, (cur) => {
      if (cur?.restartAt !== want) return cur;
      n = (cur.consecutiveFailures ?? 0) + 1;
      return {
        ...cur,
        consecutiveFailures: n,
        lastErrorReason: reason,
        lastErrorMessage: message.slice(0, 4096),
      };
    });
    const said = failedStepCondition(reason, message, n);
    await setRestarting(this.d.events, this.now(), cluster, "True", said.reason, said.message, rc);
    rc.log.warn({ reason, err: message, attempt: n }, "restart step failed; will retry");
    // The runtime's backoff (5 s doubling to 5 minutes), counted as an error, for ever; the attempt
    // count in status says how many in a row (for people, alerts and across restarts), and from
    // RESTART_STALLED_AFTER on the condition says the restart is stalled.
    return fail(reason, error);
  }

  /** Restarting=True with the step's word, and a wait saying the same: one message, never two. */
  private async inProgress(
    cluster: OpenBaoCluster,
    message: string,
    rc: InAdminOpsPass,
    opts?: { afterMs?: number },
  ): Promise<StageStop<OpenBaoClusterReasonType>> {
    await setRestarting(this.d.events, this.now(), cluster, "True", R.RestartInProgress, message, rc);
    return wait(R.RestartInProgress, message, opts);
  }
}
