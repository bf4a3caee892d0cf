import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
/**
 * The rolling upgrade in flight: one bounded step per pass, planned by plan.ts from status.upgrade
 * and a fresh observation. The StatefulSet itself is never written here: the workload controller
 * renders the partition from status.upgrade.currentPartition (workload/statefulsets/partition.ts).
 *
 * Failure policy. A pod that is not back yet is waiting, not failing; waiting longer than
 * `waitTimeoutMs` on the same ordinal is a failure. An error talking to OpenBao (step-down refused,
 * a Raft read timing out) is transient: recorded in status.upgrade.lastError*, retried with
 * exponential backoff, and a failure after `maxAttempts` in a row. A failure is recorded in
 * status.upgrade.failure and stops the roll until spec.upgrade.requests.retry changes.
 *
 * The failed upgrade keeps the operation lock: the cluster is half rolled, its StatefulSet is held
 * at a partition, and a backup or restore started on it would capture or overwrite a state the
 * upgrade still owns; the retry resumes under the same holder. A restore that must run anyway has
 * the explicit override (OpenBaoRestore overrideOperationLock), as upstream's runbook says.
 *
 * When to retry is the runtime's: a transient failure is a `retry` result, backed off per key and
 * counted in the error metrics. What must survive a restart to give up in time is in status: the
 * failed steps in a row (status.upgrade.consecutiveFailures), the wait in progress and when it began
 * (waitingOn, waitingSince), and the step-downs of one pod (stepDownOrdinal, stepDowns), so a
 * restarted (or crash-looping) operator can neither retry a failing step nor wait forever.
 */
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";
import {
  done,
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
} from "../../../../../runtime/controller.js";
import { AT_ONCE_MS, fail } from "../../../../../runtime/stages.js";
import { countAttempts, withGiveUp } from "../../../../../runtime/stages-attempts.js";
import { stageResult } from "../../../../../runtime/stages-settle.js";
import { refOf } from "../../../cluster-ref.js";
import { planeTarget } from "../../../opslifecycle/index.js";
import { parseVersion } from "../../../validate/values.js";
import { setUpgrading, UpgradeReason } from "../core/condition.js";
import { upgradeLock } from "../core/lock.js";
import {
  endRollingProgress,
  showRollingProgress,
  UpgradeStatusValue,
  upgradeFailureTotal,
  upgradeStatus,
} from "../core/metrics.js";
import { observeCluster } from "../core/observe.js";
import { compareVersions, normalizeVersion, sameVersionText } from "../core/policy.js";
import { markHandled, pendingRequest } from "../core/requests.js";
import { stamp, type UpgradeStatus, writeUpgrade } from "../core/status.js";
import { forgetUpgradeLogin, upgradeToken } from "../core/token.js";
import {
  type RollingCore,
  type RollingDeps,
  RollingEvent,
  type RollingOptions,
  STRATEGY,
  type StepContext,
  StepError,
} from "./core.js";
import { heldPartition, planRolling } from "./plan.js";
import { attemptsOf, STEP, withoutAttempts, withoutLastError } from "./record.js";
import { completePod, finalize, lowerPartition, replaceStuckPod, stepDown, waitFor } from "./steps.js";

export type { RollingDeps, RollingOptions };
export { RollingEvent, STRATEGY };

export class RollingUpgrade implements RollingCore {
  /**
   * When the partition was lowered to each cluster's pod being replaced: only for the metric
   * pod_duration_seconds (a replacement this process did not start is not timed), never a schedule.
   */
  readonly replacing = new Map<string, { ordinal: number; since: number }>();
  readonly o: Required<RollingOptions>;

  constructor(readonly d: RollingDeps) {
    this.o = {
      waitTimeoutMs: 15 * 60_000,
      maxAttempts: 5,
      stepDownSettleMs: 20_000,
      maxStepDowns: 3,
      waitPollMs: 5_000,
      ...(d.options ?? {}),
    };
  }

  /** One pass of an upgrade whose status.upgrade exists. */
  async advance(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const key = `${ref.namespace}/${ref.name}`;
    const u = cluster.status!.upgrade!;
    const target = u.targetVersion ?? "";
    const from = u.fromVersion ?? "";
    const labels = { namespace: ref.namespace, name: ref.name };

    if (cluster.spec.paused) {
      await this.condition(
        cluster,
        "False",
        UpgradeReason.Paused,
        `spec.paused: the upgrade to ${target} is held at partition ${heldPartition(u, cluster.spec.replicas ?? 3)}`,
        rc,
      );
      return done();
    }
    // spec.version moved while rolling: a newer version retargets, anything else is refused.
    if (!sameVersionText(cluster.spec.version, target)) {
      const want = parseVersion(cluster.spec.version);
      const now = parseVersion(target);
      if (!want || !now || compareVersions(want, now) < 0) {
        await this.condition(
          cluster,
          "False",
          want ? UpgradeReason.DowngradeBlocked : UpgradeReason.InvalidVersion,
          `spec.version ${cluster.spec.version} while the upgrade to ${target} is in flight: only a newer version can replace the target; the roll is held`,
          rc,
        );
        return done();
      }
      const to = normalizeVersion(cluster.spec.version);
      await writeUpgrade(
        planeTarget(rc, this.d.client),
        ref,
        (cur) =>
          cur && cur.targetVersion === target
            ? {
                upgrade: {
                  ...cur,
                  targetVersion: to,
                  currentPartition: cluster.spec.replicas ?? 3,
                  completedPods: [],
                },
              }
            : undefined,
        rc.signal,
      );
      this.d.events.record(cluster, {
        type: "Normal",
        reason: RollingEvent.Retargeted,
        action: "Upgrade",
        note: `spec.version changed to ${to} mid-upgrade: rolling every pod to ${to} from the top`,
      });
      return requeueAfter(AT_ONCE_MS);
    }
    if (u.failure) return this.failed(cluster, u, rc);

    const id = upgradeLock(ref.name, from);
    const got = await this.d.locks.acquire(ref, id, {
      message: `upgrade ${from} → ${target}`,
      signal: rc.signal,
    });
    if (!got.acquired)
      return this.fail(
        cluster,
        R.OperationLockHeld,
        `the operation lock was taken by ${got.heldBy.operation ?? "?"} (${got.heldBy.holder}) during the upgrade`,
        rc,
      );
    upgradeStatus.set(labels, UpgradeStatusValue.InProgress);

    let result: ReconcileResult;
    try {
      result = await this.step(cluster, u, key, rc);
    } catch (e) {
      rc.signal.throwIfAborted();
      forgetUpgradeLogin(cluster);
      const reason = e instanceof StepError ? e.reason : R.HealthCheckFailed;
      return this.transient(cluster, reason, e, rc);
    }
    if (u.consecutiveFailures) await this.clearFailures(cluster, rc);
    return result;
  }

  /** A step went through: the next failure starts a new count. */
  private async clearFailures(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<void> {
    const target = cluster.status?.upgrade?.targetVersion;
    await writeUpgrade(
      planeTarget(rc, this.d.client),
      refOf(cluster),
      (cur) => {
        if (!cur || cur.targetVersion !== target || !cur.consecutiveFailures) return undefined;
        const { consecutiveFailures: _cleared, ...rest } = cur;
        return { upgrade: rest };
      },
      rc.signal,
    );
  }

  private async step(
    cluster: OpenBaoCluster,
    u: UpgradeStatus,
    key: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const target = u.targetVersion ?? "";
    const token = await upgradeToken(this.d.client, this.d.access, cluster, this.d.now, rc.signal);
    if (!token)
      throw new StepError(
        R.AuthenticationRequired,
        "no OpenBao token for the Raft reads and step-down (spec.upgrade.tokenSecretRef or the root-token Secret)",
      );
    const obs = await observeCluster(this.d.client, this.d.access, cluster, token, rc.signal);
    const now = this.d.now();
    const step = planRolling({ upgrade: u, obs, now, stepDownSettleMs: this.o.stepDownSettleMs });
    const P = heldPartition(u, obs.replicas);
    showRollingProgress(
      { namespace: ref.namespace, name: ref.name },
      { completed: (u.completedPods ?? []).length, total: obs.replicas, partition: P },
    );
    const at: StepContext = { cluster, u, key, obs, now, P, target, ref, rc };
    switch (step.kind) {
      case "wait":
        return waitFor(this, at, step);
      case "complete-pod":
        return completePod(this, at, step);
      case "step-down":
        return stepDown(this, at, step);
      case "lower-partition":
        return lowerPartition(this, at, step);
      case "replace-stuck-pod":
        return replaceStuckPod(this, at, step);
      case "finalize":
        return finalize(this, cluster, u, rc);
    }
  }

  /** A recorded failure: held until a new spec.upgrade.requests.retry value. */
  private async failed(
    cluster: OpenBaoCluster,
    u: UpgradeStatus,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const retry = pendingRequest(cluster.spec, cluster.status?.upgradeRequests, "retry");
    if (retry === undefined) {
      upgradeStatus.set({ namespace: ref.namespace, name: ref.name }, UpgradeStatusValue.Failed);
      endRollingProgress({ namespace: ref.namespace, name: ref.name }, undefined);
      await this.condition(
        cluster,
        "False",
        UpgradeReason.Failed,
        `${u.failure!.reason}: ${u.failure!.message} (change spec.upgrade.requests.retry to try again)`,
        rc,
      );
      return done();
    }
    // Clearing the failure and recording the request as handled is one write: one value, one retry.
    const w = await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur, fresh) => {
        if (pendingRequest(fresh.spec, fresh.status?.upgradeRequests, "retry") !== retry) return undefined;
        const next = cur ? withoutAttempts(withoutLastError(cur)) : undefined;
        if (next) delete next.failure;
        return {
          upgrade: next ?? null,
          requests: markHandled(fresh.status?.upgradeRequests, "retry", retry),
        };
      },
      rc.signal,
    );
    if (w.wrote) {
      this.forget(`${ref.namespace}/${ref.name}`);
      this.d.events.record(cluster, {
        type: "Normal",
        reason: RollingEvent.RetryAccepted,
        action: "Upgrade",
        note: `spec.upgrade.requests.retry changed: resuming the upgrade to ${u.targetVersion} at partition ${u.currentPartition}`,
      });
    }
    return requeueAfter(AT_ONCE_MS);
  }

  private async transient(
    cluster: OpenBaoCluster,
    reason: OpenBaoClusterReasonType,
    error: unknown,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const now = this.d.now();
    const target = cluster.status?.upgrade?.targetVersion;
    // The kernel counts and gives up (stages-attempts.ts); the count lives in upstream's fields.
    const failed = { ...fail(reason, error, { giveUpAfter: this.o.maxAttempts }), stage: STEP };
    const message = failed.message;
    // Counted on the fresh status the write starts from, so a count is never lost to a stale cache.
    let record = countAttempts(attemptsOf(cluster.status?.upgrade), failed);
    await writeUpgrade(
      planeTarget(rc, this.d.client),
      refOf(cluster),
      (cur) => {
        if (!cur || cur.targetVersion !== target) return undefined;
        record = countAttempts(attemptsOf(cur), failed);
        return {
          upgrade: {
            ...cur,
            consecutiveFailures: record?.attempts ?? 1,
            lastErrorReason: reason,
            lastErrorMessage: message.slice(0, 4096),
            lastErrorAt: stamp(now),
          },
        };
      },
      rc.signal,
    );
    const n = record?.attempts ?? 1;
    if (withGiveUp(failed, record).kind === "invalid")
      return this.fail(cluster, reason, `${message} (${n} attempts)`, rc);
    rc.log.warn({ reason, err: message, attempt: n }, "upgrade step failed; will retry");
    // Said where a user looks, not only in the log: Upgrading keeps True (the roll goes on) with the
    // step's reason until a step succeeds and sets InProgress again.
    await this.condition(
      cluster,
      "True",
      reason,
      `${message} (attempt ${n} of ${this.o.maxAttempts}; retrying)`.slice(0, 4096),
      rc,
    );
    // The runtime backs the retry off per key (5 s doubling) and counts it as a failed pass.
    return stageResult(failed, { waitAfterMs: this.o.waitPollMs });
  }

  /** The roll fails: recorded, held until a retry request (also called by the steps, steps.ts). */
  async fail(
    cluster: OpenBaoCluster,
    reason: string,
    message: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const now = this.d.now();
    const target = cluster.status?.upgrade?.targetVersion;
    const w = await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur) =>
        cur && cur.targetVersion === target && !cur.failure
          ? {
              upgrade: {
                ...cur,
                lastErrorReason: reason,
                lastErrorMessage: message.slice(0, 4096),
                lastErrorAt: stamp(now),
                failure: { reason, message: message.slice(0, 4096), at: stamp(now) },
              },
            }
          : undefined,
      rc.signal,
    );
    if (w.wrote)
      upgradeFailureTotal.inc({ namespace: ref.namespace, name: ref.name, strategy: STRATEGY, reason });
    upgradeStatus.set({ namespace: ref.namespace, name: ref.name }, UpgradeStatusValue.Failed);
    endRollingProgress({ namespace: ref.namespace, name: ref.name }, undefined);
    this.forget(`${ref.namespace}/${ref.name}`);
    await this.condition(
      cluster,
      "False",
      UpgradeReason.Failed,
      `${reason}: ${message} (change spec.upgrade.requests.retry to try again)`,
      rc,
    );
    return done();
  }

  forget(key: string): void {
    this.replacing.delete(key);
  }

  async condition(
    cluster: OpenBaoCluster,
    status: "True" | "False",
    reason: OpenBaoClusterReasonType,
    message: string,
    rc: ReconcileContext,
  ): Promise<void> {
    await setUpgrading(
      planeTarget(rc, this.d.client),
      this.d.events,
      cluster,
      { status, reason, message },
      this.d.now(),
      rc.signal,
    );
  }
}
