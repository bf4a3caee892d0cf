/** What one step of the roll decided on: the cluster as observed, and when. */
interface StepContext {
  cluster: OpenBaoCluster;
  u: UpgradeStatus;
  key: string;
  obs: Awaited<ReturnType<typeof observeCluster>>;
  now: Date;
  /** The partition held when the step was planned. */
  P: number;
  target: string;
  ref: ReturnType<typeof refOf>;
  rc: ReconcileContext;
}

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
import type { KubeClient } from "../../../../../runtime/client.js";
import {
  done,
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
} from "../../../../../runtime/controller.js";
import { errorMessage } from "../../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import { AT_ONCE_MS, fail } from "../../../../../runtime/stages.js";
import { type AttemptRecord, countAttempts, withGiveUp } from "../../../../../runtime/stages-attempts.js";
import { stageResult } from "../../../../../runtime/stages-settle.js";
import { refOf } from "../../../cluster-ref.js";
import { commitBeforeRelease, type OperationLockStore, planeTarget } from "../../../opslifecycle/index.js";
import { parseVersion } from "../../../validate/values.js";
import { setUpgrading, UpgradeReason } from "../core/condition.js";
import { upgradeLock } from "../core/lock.js";
import {
  endRollingProgress,
  showRollingProgress,
  UpgradeStatusValue,
  upgradeDuration,
  upgradeFailureTotal,
  upgradePodDuration,
  upgradeStatus,
  upgradeStepDownFailures,
  upgradeStepDowns,
  upgradeSuccessTotal,
} from "../core/metrics.js";
import { type BaoAccess, observeCluster, STEP_DOWN_POLL_MS, voterClient } from "../core/observe.js";
import { compareVersions, normalizeVersion, sameVersionText } from "../core/policy.js";
import { markHandled, pendingRequest } from "../core/requests.js";
import { stamp, type UpgradeStatus, writeUpgrade } from "../core/status.js";
import { forgetUpgradeLogin, upgradeToken } from "../core/token.js";
import { heldPartition, planRolling, type RollingStep } from "./plan.js";

export const STRATEGY = "RollingUpdate";

export const RollingEvent = {
  StepDown: R.LeaderSteppedDown,
  PodUpgraded: R.UpgradePodReplaced,
  PartitionLowered: R.UpgradePodReplacing,
  Retargeted: R.UpgradeRetargeted,
  RetryAccepted: R.UpgradeRetryAccepted,
} as const;

export interface RollingOptions {
  /** A replaced pod may take this long to come back before the upgrade fails (default 15 minutes). */
  waitTimeoutMs?: number;
  /** Transient errors in a row before the upgrade fails (default 5). */
  maxAttempts?: number;
  /** After a step-down, how long to wait for another leader before asking again (default 20 s). */
  stepDownSettleMs?: number;
  /** Step-downs of one pod that did not move leadership before StepDownTimeout (default 3). */
  maxStepDowns?: number;
  /**
   * Requeue while waiting (default 5 s). Pod and StatefulSet changes wake the pass sooner; what they
   * do not show (the replacement unsealed, Raft healthy: OpenBao's own state) has no watch: polled.
   */
  waitPollMs?: number;
}

export interface RollingDeps {
  client: KubeClient;
  events: EventRecorder;
  locks: OperationLockStore;
  access: BaoAccess;
  now: () => Date;
  options?: RollingOptions;
}

class StepError extends Error {
  constructor(
    readonly reason: OpenBaoClusterReasonType,
    message: string,
  ) {
    super(message);
  }
}

export class RollingUpgrade {
  /**
   * When the partition was lowered to each cluster's pod being replaced: only for the metric
   * pod_duration_seconds (a replacement this process did not start is not timed), never a schedule.
   */
  private readonly replacing = new Map<string, { ordinal: number; since: number }>();
  private readonly o: Required<RollingOptions>;

  constructor(private readonly d: RollingDeps) {
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
        return this.waitFor(at, step);
      case "complete-pod":
        return this.completePod(at, step);
      case "step-down":
        return this.stepDown(at, step);
      case "lower-partition":
        return this.lowerPartition(at, step);
      case "finalize":
        return this.finalize(cluster, u, rc);
    }
  }

  private async waitFor(
    at: StepContext,
    step: Extract<RollingStep, { kind: "wait" }>,
  ): Promise<ReconcileResult> {
    const { cluster, u, obs, now, P, target, ref, rc } = at;
    const what = `${P}/${step.ordinal ?? "-"}`;
    const began = u.waitingOn === what && u.waitingSince ? Date.parse(u.waitingSince) : Number.NaN;
    const since = Number.isFinite(began) ? began : now.getTime();
    // A new wait is recorded once, so its timeout holds across restarts of the operator.
    if (!Number.isFinite(began))
      await writeUpgrade(
        planeTarget(rc, this.d.client),
        ref,
        (cur) =>
          cur && cur.targetVersion === target
            ? { upgrade: { ...cur, waitingOn: what, waitingSince: stamp(now) } }
            : undefined,
        rc.signal,
      );
    if (now.getTime() - since > this.o.waitTimeoutMs)
      return this.fail(
        cluster,
        R.UpgradeFailed,
        `${step.message} for more than ${Math.round(this.o.waitTimeoutMs / 60_000)} minutes`,
        rc,
      );
    await this.condition(
      cluster,
      "True",
      UpgradeReason.InProgress,
      `${progress(u, obs.replicas)}: ${step.message}`,
      rc,
    );
    return requeueAfter(this.o.waitPollMs);
  }

  private async completePod(
    at: StepContext,
    step: Extract<RollingStep, { kind: "complete-pod" }>,
  ): Promise<ReconcileResult> {
    const { cluster, obs, target, ref, rc } = at;
    const w = await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur) =>
        cur && cur.targetVersion === target && heldPartition(cur, obs.replicas) === step.ordinal
          ? {
              upgrade: {
                ...withoutWait(withoutLastError(cur)),
                completedPods: [...new Set([...(cur.completedPods ?? []), step.ordinal])].sort(
                  (a, b) => b - a,
                ),
              },
            }
          : undefined,
      rc.signal,
    );
    const labels = { namespace: ref.namespace, name: ref.name };
    const started = this.replacing.get(at.key);
    if (w.wrote && started?.ordinal === step.ordinal) {
      upgradePodDuration.observe(
        { ...labels, pod: obs.voters[step.ordinal]!.name },
        Math.max(0, (this.d.now().getTime() - started.since) / 1000),
      );
      this.replacing.delete(at.key);
    }
    if (w.wrote)
      this.d.events.record(cluster, {
        type: "Normal",
        reason: RollingEvent.PodUpgraded,
        action: "Upgrade",
        note: `pod ${obs.voters[step.ordinal]!.name} runs ${target}, is Ready and unsealed; Raft is healthy`,
      });
    return requeueAfter(AT_ONCE_MS);
  }

  private async stepDown(
    at: StepContext,
    step: Extract<RollingStep, { kind: "step-down" }>,
  ): Promise<ReconcileResult> {
    const { cluster, u, obs, now, target, ref, rc } = at;
    const count = u.stepDownOrdinal === step.ordinal ? (u.stepDowns ?? 0) + 1 : 1;
    if (count > this.o.maxStepDowns)
      return this.fail(
        cluster,
        R.StepDownTimeout,
        `pod ${obs.voters[step.ordinal]!.name} is still the Raft leader after ${this.o.maxStepDowns} step-downs`,
        rc,
      );
    const token = (await upgradeToken(this.d.client, this.d.access, cluster, this.d.now, rc.signal))!;
    const labels = { namespace: ref.namespace, name: ref.name };
    upgradeStepDowns.inc(labels);
    try {
      const bao = await voterClient(this.d.client, this.d.access, cluster, step.ordinal);
      await bao.stepDown(token, rc.signal);
    } catch (e) {
      rc.signal.throwIfAborted();
      upgradeStepDownFailures.inc(labels);
      throw new StepError(
        R.StepDownFailed,
        `step-down of ${obs.voters[step.ordinal]!.name}: ${errorMessage(e)}`,
      );
    }
    await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur) =>
        cur && cur.targetVersion === target
          ? {
              upgrade: {
                ...withoutWait(cur),
                lastStepDownTime: stamp(now),
                stepDownOrdinal: step.ordinal,
                stepDowns: count,
              },
            }
          : undefined,
      rc.signal,
    );
    this.d.events.record(cluster, {
      type: "Normal",
      reason: RollingEvent.StepDown,
      action: "Upgrade",
      note: `asked the leader ${obs.voters[step.ordinal]!.name} to step down before its pod is replaced`,
    });
    await this.condition(
      cluster,
      "True",
      UpgradeReason.InProgress,
      `${progress(u, obs.replicas)}: leader ${obs.voters[step.ordinal]!.name} stepping down`,
      rc,
    );
    return requeueAfter(STEP_DOWN_POLL_MS);
  }

  private async lowerPartition(
    at: StepContext,
    step: Extract<RollingStep, { kind: "lower-partition" }>,
  ): Promise<ReconcileResult> {
    const { cluster, u, obs, P, target, ref, rc } = at;
    const w = await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur) =>
        cur && cur.targetVersion === target && heldPartition(cur, obs.replicas) === P
          ? { upgrade: { ...withoutWait(withoutLastError(cur)), currentPartition: step.to } }
          : undefined,
      rc.signal,
    );
    if (w.wrote) {
      this.replacing.set(at.key, { ordinal: step.to, since: this.d.now().getTime() });
      showRollingProgress(
        { namespace: ref.namespace, name: ref.name },
        { completed: (u.completedPods ?? []).length, total: obs.replicas, partition: step.to },
      );
    }
    if (w.wrote)
      this.d.events.record(cluster, {
        type: "Normal",
        reason: RollingEvent.PartitionLowered,
        action: "Upgrade",
        note: `partition ${P} → ${step.to}: pod ${obs.voters[step.to]!.name} is replaced with ${target}`,
      });
    await this.condition(
      cluster,
      "True",
      UpgradeReason.InProgress,
      `${progress({ ...u, currentPartition: step.to }, obs.replicas)}: replacing pod ${obs.voters[step.to]!.name}`,
      rc,
    );
    return requeueAfter(this.o.waitPollMs);
  }

  private async finalize(
    cluster: OpenBaoCluster,
    u: UpgradeStatus,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const target = u.targetVersion ?? "";
    const w = await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur) => (cur && cur.targetVersion === target && !cur.failure ? { upgrade: null } : undefined),
      rc.signal,
    );
    const labels = { namespace: ref.namespace, name: ref.name, strategy: STRATEGY };
    const now = this.d.now();
    const started = u.startedAt ? Date.parse(u.startedAt) : Number.NaN;
    const seconds = Number.isFinite(started) ? Math.max(0, (now.getTime() - started) / 1000) : undefined;
    if (w.wrote) {
      upgradeSuccessTotal.inc(labels);
      if (seconds !== undefined) upgradeDuration.observe(labels, seconds);
    }
    await this.condition(
      cluster,
      "False",
      UpgradeReason.Complete,
      `upgraded from ${u.fromVersion} to ${target}${seconds !== undefined ? ` in ${Math.round(seconds)}s` : ""}`,
      rc,
    );
    await commitBeforeRelease(rc);
    await this.d.locks.release(ref, upgradeLock(ref.name, u.fromVersion ?? ""), rc.signal);
    upgradeStatus.set({ namespace: ref.namespace, name: ref.name }, UpgradeStatusValue.Succeeded);
    endRollingProgress({ namespace: ref.namespace, name: ref.name }, { total: cluster.spec.replicas ?? 3 });
    this.forget(`${ref.namespace}/${ref.name}`);
    return requeueAfter(AT_ONCE_MS);
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
    // The runtime backs the retry off per key (5 s doubling) and counts it as a failed pass.
    return stageResult(failed, { waitAfterMs: this.o.waitPollMs });
  }

  private async fail(
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

  private forget(key: string): void {
    this.replacing.delete(key);
  }

  private async condition(
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

/** The kernel's name for a step of the roll: every failed step counts towards one give-up. */
const STEP = "rolling-step";

/** status.upgrade's count of failed steps, as the kernel's attempt record. */
function attemptsOf(u: UpgradeStatus | undefined): AttemptRecord | undefined {
  return u?.consecutiveFailures
    ? { stage: STEP, reason: u.lastErrorReason ?? "", attempts: u.consecutiveFailures }
    : undefined;
}

function withoutLastError(u: UpgradeStatus): UpgradeStatus {
  const n = { ...u };
  delete n.lastErrorReason;
  delete n.lastErrorMessage;
  delete n.lastErrorAt;
  delete n.consecutiveFailures;
  return n;
}

/** The wait is over: the next one begins its own clock. */
function withoutWait(u: UpgradeStatus): UpgradeStatus {
  const n = { ...u };
  delete n.waitingOn;
  delete n.waitingSince;
  return n;
}

/** A retried roll starts its waits and step-downs over. */
function withoutAttempts(u: UpgradeStatus): UpgradeStatus {
  const n = withoutWait(u);
  delete n.stepDownOrdinal;
  delete n.stepDowns;
  return n;
}

function progress(u: UpgradeStatus, replicas: number): string {
  const done = (u.completedPods ?? []).length;
  return `upgrading ${u.fromVersion} → ${u.targetVersion}, ${done}/${replicas} pods done, partition ${heldPartition(u, replicas)}`;
}
