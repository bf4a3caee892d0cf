/**
 * The blue-green executor: each pass observes (pods, Autopilot), asks the pure plan what to do,
 * performs the plan's Raft actions through raftops, and writes what the plan decided to the AdminOps
 * status plane. It holds no state of its own, so a restarted operator picks up from status.
 *
 * Plugs into the upgrade core as its BlueGreen StrategyHandler (core/manager.ts): the core has
 * already refused downgrades and invalid versions before it calls a strategy.
 */
import { randomBytes } from "node:crypto";
import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../../../apis/openbaocluster-names.js";
import { liveReader } from "../../../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import {
  done,
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
  retry,
} from "../../../../../runtime/controller.js";
import { errorMessage } from "../../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import { AT_ONCE_MS } from "../../../../../runtime/stages.js";
import { refOf } from "../../../cluster-ref.js";
import { revisionFor } from "../../../identity.js";
import { operatorImage } from "../../../imageverify/check.js";
import type { ImageVerifier } from "../../../imageverify/verifier.js";
import {
  applyConcern,
  changePlane,
  commitBeforeRelease,
  contention,
  OperationLockStore,
  planeTarget,
} from "../../../opslifecycle/index.js";
import type { Platform } from "../../../platform.js";
import { imageOf } from "../../../workload/statefulsets/build.js";
import { DEFAULT_JOB_START_TIMEOUT_MS } from "../../jobs/start-health.js";
import { setUpgrading } from "../core/condition.js";
import { upgradeLock } from "../core/lock.js";
import {
  UpgradeStatusValue,
  upgradeFailureTotal,
  upgradeStatus,
  upgradeSuccessTotal,
  upgradeTotal,
} from "../core/metrics.js";
import type { BaoAccess } from "../core/observe.js";
import { forgetUpgradeLogin, upgradeToken } from "../core/token.js";
import { executePass } from "./actions.js";
import { recordStepFailure } from "./attempts.js";
import { observeHook, startHook } from "./hook-job.js";
import { type BlueGreenObservation, observeBlueGreen, sideIds } from "./observe.js";
import { planBlueGreen } from "./plan.js";
import type { BlueGreenStatus, Observed, Plan, PlanSpec, PlanStatus, RaftAction } from "./types.js";

export const STRATEGY = "BlueGreen";

export interface BlueGreenDeps {
  client: KubeClient;
  events: EventRecorder;
  access: BaoAccess;
  /** Checks the hook image under spec.operatorImageVerification; unset: not checked. */
  imageVerifier?: ImageVerifier;
  now?: () => Date;
  /** How long the hook Job's pod may take to start (the target's jobStartTimeout). */
  jobStartTimeoutMs?: number;
  /** The hook Job pod's platform (platform.ts); kubernetes if unset. */
  platform?: Platform;
  /** Pre-upgrade snapshot (U2's ensurePreUpgradeSnapshot), when wired. */
  snapshot?: (
    cluster: OpenBaoCluster,
    opts: { upgradeId: string; signal?: AbortSignal },
  ) => Promise<NonNullable<Observed["snapshot"]>>;
}

export class BlueGreenUpgrade {
  private readonly now: () => Date;
  private readonly locks: OperationLockStore;

  constructor(private readonly d: BlueGreenDeps) {
    this.now = d.now ?? (() => new Date());
    this.locks = new OperationLockStore(d.client, { now: this.now });
  }

  /** The StrategyHandler the core calls for BlueGreen clusters. */
  readonly handle = (cluster: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> =>
    this.pass(cluster, rc);

  private async pass(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const bg: BlueGreenStatus = cluster.status?.blueGreen ?? { phase: "Idle" };
    const from = cluster.status?.currentVersion ?? "unknown";
    const lock = upgradeLock(ref.name, from);

    // A login that fails (no leader to answer it) is the same as no token: Raft is not read this
    // pass and the plan waits, or judges blue without it (break-glass).
    const token = await upgradeToken(this.d.client, this.d.access, cluster, this.now, rc.signal).catch(
      (e: unknown) => {
        rc.signal.throwIfAborted();
        rc.log.debug({ err: errorMessage(e) }, "no OpenBao token this pass");
        return undefined;
      },
    );
    const seen = await observeBlueGreen(this.d.client, this.d.access, cluster, bg, token, rc.signal);
    const snapshot = await this.snapshot(cluster, bg, from, rc);
    const hookSpec = cluster.spec.upgrade?.blueGreen?.verification?.prePromotionHook;
    let hook =
      hookSpec && bg.phase === "Syncing"
        ? await observeHook(this.d.client, cluster, bg, {
            now: this.now(),
            timeoutMs: this.d.jobStartTimeoutMs ?? DEFAULT_JOB_START_TIMEOUT_MS,
          })
        : undefined;
    // The hook's image under spec.operatorImageVerification, before its Job exists: a refused image
    // is the hook failing (the plan's validation failure, rolled back as autoRollback says).
    let hookImage = hookSpec?.image;
    if (hook?.state === "NotStarted" && hookSpec) {
      const checked = await operatorImage(
        this.d.imageVerifier,
        { reader: liveReader(this.d.client), events: this.d.events, signal: rc.signal },
        cluster,
        hookSpec.image,
        OpenBaoClusterReason.UpgradeExecutorImageVerificationFailed,
        "pre-promotion hook image",
      );
      if (checked.ok) hookImage = checked.image;
      else
        hook = { state: "Failed", jobName: hook.jobName, message: `${checked.reason}: ${checked.message}` };
    }
    const now = this.now();
    const plan = planBlueGreen(
      specOf(cluster),
      statusOf(cluster),
      { now, ...seen, snapshot, hook },
      {
        operationID: randomBytes(4).toString("hex"),
        greenRevision: revisionFor(cluster.spec.version, randomBytes(3).toString("hex")),
        nonce: randomBytes(16).toString("hex"),
      },
    );

    // The lock is held from before DeployingGreen to the end of the attempt (renewed every pass); an
    // Idle pass that starts nothing (a rolled-back version waiting for a retry) does not take it.
    const phase = bg.phase ?? "Idle";
    if (phase !== "Idle" || plan.blueGreen?.phase === "DeployingGreen") {
      const got = await this.locks.acquire(ref, lock, {
        message: `blue-green upgrade ${from} → ${cluster.spec.version}`,
        signal: rc.signal,
      });
      if (!got.acquired) {
        const c = contention(got.heldBy, lock);
        await setUpgrading(
          planeTarget(rc, this.d.client),
          this.d.events,
          cluster,
          { status: "False", reason: c.reason, message: c.message },
          now,
          rc.signal,
        );
        return requeueAfter(c.requeueAfterMs);
      }
    }

    let next = plan.blueGreen;
    if (plan.startHook && hookSpec && hookImage)
      await startHook(this.d, cluster, bg, { ...hookSpec, image: hookImage }, this.d.access.clusterDomain);
    const failure = plan.halted ? undefined : await this.act(plan.actions, seen, cluster, bg, token, rc);
    if (failure) {
      next = recordStepFailure(next ?? bg, failure);
      forgetUpgradeLogin(cluster);
    }

    await this.write(cluster, plan, next, rc);
    // Phase changes inside one condition reason (UpgradeInProgress) get their own event.
    if (
      plan.event &&
      plan.blueGreen?.phase !== bg.phase &&
      plan.condition?.reason === OpenBaoClusterReason.UpgradeInProgress
    )
      this.d.events.record(cluster, {
        type: plan.event.type,
        reason: plan.event.reason,
        action: "Upgrade",
        note: plan.event.message.slice(0, 1000),
      });
    if (plan.condition)
      await setUpgrading(
        planeTarget(rc, this.d.client),
        this.d.events,
        cluster,
        plan.condition,
        now,
        rc.signal,
      );
    this.count(cluster, plan, bg);
    if (plan.completed || plan.rolledBack) {
      await commitBeforeRelease(rc);
      await this.locks.release(ref, lock, rc.signal);
      return done();
    }
    // A failed step is counted in status.blueGreen.jobFailureCount (maxJobFailures survives a
    // restart); when to look again is the runtime's failure backoff, doubling from 5 s, so a leader
    // change (a few seconds without an active node) cannot use up the attempts in one burst.
    if (failure) return retry(OpenBaoClusterReason.HealthCheckFailed);
    return plan.requeueAfterMs === undefined
      ? done()
      : requeueAfter(Math.max(AT_ONCE_MS, plan.requeueAfterMs));
  }

  private async snapshot(cluster: OpenBaoCluster, bg: BlueGreenStatus, from: string, rc: ReconcileContext) {
    const wanted =
      cluster.spec.upgrade?.blueGreen?.preUpgradeSnapshot ?? cluster.spec.upgrade?.preUpgradeSnapshot;
    if (!wanted || (bg.phase ?? "Idle") !== "Idle" || !this.d.snapshot) return undefined;
    return this.d.snapshot(cluster, { upgradeId: `${from}-to-${cluster.spec.version}`, signal: rc.signal });
  }

  /** Runs the plan's Raft actions; returns a description of the first failure (counted, not thrown). */
  private async act(
    actions: RaftAction[],
    seen: BlueGreenObservation,
    cluster: OpenBaoCluster,
    bg: BlueGreenStatus,
    token: string | undefined,
    rc: ReconcileContext,
  ): Promise<string | undefined> {
    const ops = seen.member && token ? { client: seen.member, token, signal: rc.signal } : undefined;
    return executePass(bg.phase ?? "Idle", actions, { state: seen.state, ops }, sideIds(cluster, bg));
  }

  /** blueGreen, breakGlass and upgradeRequests in one change of the AdminOps plane. */
  private async write(
    cluster: OpenBaoCluster,
    plan: Plan,
    blueGreen: BlueGreenStatus | undefined,
    rc: ReconcileContext,
  ): Promise<void> {
    if (!blueGreen && !plan.breakGlass && !plan.upgradeRequests) return;
    await changePlane(
      planeTarget(rc, this.d.client),
      refOf(cluster),
      (before) => {
        let next = before;
        if (blueGreen) next = applyConcern(next, "blueGreen", blueGreen);
        if (plan.breakGlass) next = applyConcern(next, "breakGlass", plan.breakGlass);
        if (plan.upgradeRequests) next = applyConcern(next, "upgradeRequests", plan.upgradeRequests);
        return next;
      },
      rc.signal,
    );
  }

  private count(cluster: OpenBaoCluster, plan: Plan, before: BlueGreenStatus): void {
    const ref = refOf(cluster);
    const labels = { namespace: ref.namespace, name: ref.name };
    if ((before.phase ?? "Idle") === "Idle" && plan.blueGreen?.phase === "DeployingGreen") {
      upgradeTotal.inc({ ...labels, strategy: STRATEGY });
      upgradeStatus.set(labels, UpgradeStatusValue.InProgress);
    }
    if (plan.completed) {
      upgradeSuccessTotal.inc({ ...labels, strategy: STRATEGY });
      upgradeStatus.set(labels, UpgradeStatusValue.Succeeded);
    }
    if (plan.rolledBack || plan.breakGlass?.active) {
      upgradeFailureTotal.inc({
        ...labels,
        strategy: STRATEGY,
        reason: plan.condition?.reason ?? OpenBaoClusterReason.UpgradeRollback,
      });
      upgradeStatus.set(labels, UpgradeStatusValue.Failed);
    }
  }
}

function specOf(c: OpenBaoCluster): PlanSpec {
  return {
    version: c.spec.version,
    image: imageOf(c),
    replicas: c.spec.replicas ?? 3,
    settings: c.spec.upgrade?.blueGreen,
    requests: c.spec.upgrade?.requests ?? {},
    breakGlassAck: c.spec.breakGlassAck,
  };
}

/** The image blue runs: pinned by a previous blue-green, else the one the running version implies. */
function statusOf(c: OpenBaoCluster): PlanStatus {
  const s = c.status ?? {};
  const current = s.currentVersion ?? c.spec.version;
  const currentImage =
    s.blueGreen?.blueImage ??
    (c.spec.image && current === c.spec.version
      ? c.spec.image
      : `openbao/openbao:${current.replace(/^v/, "")}`);
  return {
    currentVersion: s.currentVersion,
    currentImage,
    blueGreen: s.blueGreen,
    breakGlass: s.breakGlass,
    upgradeRequests: s.upgradeRequests,
  };
}
