/**
 * The upgrade half of the AdminOps path: decides whether an upgrade is due, checks what must hold
 * before any strategy advances (version and image policy, health, the operation lock, the optional
 * pre-upgrade snapshot), starts it, and hands an upgrade in flight to its strategy. Each pass reads
 * the cluster fresh; everything it needs to resume is in status (status.upgrade, the lock).
 */

import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";
import { type CachedReader, liveReader } from "../../../../../runtime/cached-reader.js";
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
import type { Informer } from "../../../../../runtime/informer.js";
import { AT_ONCE_MS } from "../../../../../runtime/stages.js";
import { splitKey } from "../../../../../runtime/types.js";
import { OPENBAOCLUSTER, refOf } from "../../../cluster-ref.js";
import {
  type AdminOpsContext,
  CONTENTION_REQUEUE_MS,
  commitBeforeRelease,
  contention,
  OperationLockStore,
  planeTarget,
  withAdminOpsPass,
} from "../../../opslifecycle/index.js";
import { sealPluginProblem } from "../../../validate/seal-plugins.js";
import { parseVersion } from "../../../validate/values.js";
import { STRATEGY as ROLLING, type RollingOptions, RollingUpgrade } from "../rolling/manager.js";
import { setUpgrading, UpgradeReason } from "./condition.js";
import { isUpgradeLock, upgradeLock } from "./lock.js";
import {
  forgetUpgradeMetrics,
  UpgradeStatusValue,
  upgradeFailureTotal,
  upgradeStatus,
  upgradeTotal,
} from "./metrics.js";
import { type BaoAccess, type ClusterObservation, observeCluster } from "./observe.js";
import { compareVersions, decideVersion, type VersionDecision } from "./policy.js";
import { checkUpgradePrerequisites } from "./prerequisites.js";
import { noSnapshots, type PreUpgradeSnapshotPort } from "./snapshot-port.js";
import { stamp, writeUpgrade } from "./status.js";
import { upgradeToken } from "./token.js";

/** A strategy other than rolling (blue-green), when one is wired: it runs the whole upgrade. */
export type StrategyHandler = (cluster: OpenBaoCluster, rc: ReconcileContext) => Promise<ReconcileResult>;

export interface UpgradeManagerDeps {
  client: KubeClient;
  events: EventRecorder;
  /** Only asked whether the cluster still exists; decisions use a fresh read. */
  clusters: Pick<Informer<OpenBaoCluster>, "get">;
  /** Where the fresh read comes from (see BackupReconcilerDeps.reader); live reads when unset. */
  reader?: Pick<CachedReader, "get">;
  access: BaoAccess;
  snapshot?: PreUpgradeSnapshotPort;
  /** BlueGreen, when built; without it a BlueGreen upgrade is left alone (reported unsupported). */
  blueGreen?: StrategyHandler;
  rolling?: RollingOptions;
  now?: () => Date;
}

/** A missing prerequisite is looked at again after this (pods and the lock also wake the pass). */
const PREREQ_POLL_MS = 15_000;
/**
 * While the pre-upgrade snapshot Job runs: its Job and pod changes wake the pass; this bounds a
 * missed event and follows a pod that cannot start (its waiting reason changes no Job field).
 */
const SNAPSHOT_POLL_MS = 10_000;

export class UpgradeManager {
  private readonly now: () => Date;
  private readonly locks: OperationLockStore;
  private readonly rolling: RollingUpgrade;
  private readonly snapshot: PreUpgradeSnapshotPort;

  constructor(private readonly d: UpgradeManagerDeps) {
    this.now = d.now ?? (() => new Date());
    this.locks = new OperationLockStore(d.client, { now: this.now });
    this.snapshot = d.snapshot ?? noSnapshots;
    this.rolling = new RollingUpgrade({
      client: d.client,
      events: d.events,
      locks: this.locks,
      access: d.access,
      now: this.now,
      options: d.rolling,
    });
  }

  async reconcile(key: string, rc: AdminOpsContext): Promise<ReconcileResult> {
    const { namespace = "", name } = splitKey(key);
    const cached = this.d.clusters.get(key);
    if (!cached) {
      forgetUpgradeMetrics(namespace, name);
      return done();
    }
    if (cached.metadata.deletionTimestamp) return done();
    const fresh = await (this.d.reader ?? liveReader(this.d.client)).get<OpenBaoCluster>(
      OPENBAOCLUSTER,
      name,
      namespace,
    );
    if (!fresh) return done();
    const cluster = fresh;
    if (cluster.metadata.deletionTimestamp) return done();
    // The pass's AdminOps status changes are staged and applied once, at its end: by the controller
    // when it runs the halves in one pass, else here.
    return withAdminOpsPass(this.d.client, refOf(cluster), rc, (pass) => this.route(cluster, pass));
  }

  private route(cluster: OpenBaoCluster, rc: AdminOpsContext): Promise<ReconcileResult> {
    // An upgrade in flight finishes with the strategy it started with; a strategy change waits.
    if (cluster.status?.upgrade) return this.rolling.advance(cluster, rc);
    const bg = cluster.status?.blueGreen?.phase;
    if (bg && bg !== "Idle")
      return this.d.blueGreen ? this.d.blueGreen(cluster, rc) : Promise.resolve(done());
    return this.idle(cluster, rc);
  }

  private async idle(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<ReconcileResult> {
    let decision = decideVersion({
      specVersion: cluster.spec.version,
      specImage: cluster.spec.image,
      currentVersion: cluster.status?.currentVersion,
    });
    if (decision.kind === "refused") return this.refused(cluster, decision, rc);
    if (decision.kind === "none") return this.nothingToDo(cluster, decision, rc);
    // OpenBao 2.7's seal plugins (validate/seal-plugins.ts): refused before any strategy starts.
    const sealPlugin = sealPluginProblem(cluster.spec);
    if (sealPlugin)
      return this.refused(
        cluster,
        { kind: "refused", reason: R.InvalidSpec, message: `${sealPlugin.field}: ${sealPlugin.message}` },
        rc,
      );
    const strategy = cluster.spec.upgrade?.strategy ?? ROLLING;
    if (strategy !== ROLLING) return this.d.blueGreen ? this.d.blueGreen(cluster, rc) : done();
    if (cluster.spec.paused) {
      await this.condition(
        cluster,
        "False",
        UpgradeReason.Paused,
        `spec.paused: the upgrade to ${decision.to} waits`,
        rc,
      );
      return done();
    }
    let token: string | undefined;
    let tokenProblem: string | undefined;
    try {
      token = await upgradeToken(this.d.client, this.d.access, cluster, this.now, rc.signal);
    } catch (e) {
      rc.signal.throwIfAborted();
      tokenProblem = errorMessage(e);
    }
    const obs = await observeCluster(this.d.client, this.d.access, cluster, token, rc.signal);
    // status.currentVersion is the workload controller's last look at pod 0; the voters' own answers
    // are fresher (right after an upgrade finished, status may still name the old version).
    const running = lowestVersion(obs);
    if (running) {
      decision = decideVersion({
        specVersion: cluster.spec.version,
        specImage: cluster.spec.image,
        currentVersion: running,
      });
      if (decision.kind === "refused") return this.refused(cluster, decision, rc);
      if (decision.kind === "none") return this.nothingToDo(cluster, decision, rc);
    }
    return this.start(cluster, decision, obs, { available: !!token, problem: tokenProblem }, rc);
  }

  private async start(
    cluster: OpenBaoCluster,
    decision: Extract<VersionDecision, { kind: "upgrade" }>,
    obs: ClusterObservation,
    token: { available: boolean; problem?: string },
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    const { from, to } = decision;
    const id = upgradeLock(ref.name, from);
    const pre = checkUpgradePrerequisites({
      initialized: cluster.status?.initialized === true,
      replicas: obs.replicas,
      voters: obs.voters,
      tokenAvailable: token.available,
      tokenProblem: token.problem,
      lock: cluster.status?.operationLock,
      holder: id.holder,
    });
    if (!pre.ok) {
      await this.condition(cluster, "False", pre.reason, `upgrade to ${to} waits: ${pre.message}`, rc);
      return requeueAfter(
        pre.reason === UpgradeReason.OperationLockHeld ? CONTENTION_REQUEUE_MS : PREREQ_POLL_MS,
      );
    }
    const got = await this.locks.acquire(ref, id, { message: `upgrade ${from} → ${to}`, signal: rc.signal });
    if (!got.acquired) {
      const c = contention(got.heldBy, id);
      await this.condition(cluster, "False", c.reason, c.message, rc);
      return requeueAfter(c.requeueAfterMs);
    }
    const snap = await this.snapshot(cluster, { upgradeId: `${from}-to-${to}`, signal: rc.signal });
    const labels = { namespace: ref.namespace, name: ref.name };
    if (snap.state === "Running") {
      await this.condition(
        cluster,
        "True",
        UpgradeReason.Started,
        snap.notStarted
          ? `upgrade ${from} → ${to}: waiting for the pre-upgrade snapshot: ${snap.notStarted}`
          : `upgrade ${from} → ${to}: waiting for the pre-upgrade snapshot${snap.jobName ? ` Job ${snap.jobName}` : ""}`,
        rc,
      );
      return requeueAfter(SNAPSHOT_POLL_MS);
    }
    if (snap.state === "Failed") {
      // Counted once per failure, not once per look at it (the runtime's backoff looks again sooner).
      const said = cluster.status?.conditions?.find((c) => c.type === C.Upgrading);
      if (said?.reason !== UpgradeReason.PreUpgradeBackupFailed)
        upgradeFailureTotal.inc({
          ...labels,
          strategy: ROLLING,
          reason: UpgradeReason.PreUpgradeBackupFailed,
        });
      await this.condition(
        cluster,
        "False",
        UpgradeReason.PreUpgradeBackupFailed,
        `upgrade ${from} → ${to} not started: ${snap.message ?? snap.reason ?? "the pre-upgrade snapshot failed"}`,
        rc,
      );
      // Nothing was rolled: the lock goes back so backups and restores can run.
      await commitBeforeRelease(rc);
      await this.locks.release(ref, id, rc.signal);
      // A failed Job stays failed for this upgrade; a missing Secret or image may be fixed. Either
      // way the runtime's failure backoff looks again (5 s doubling to 5 minutes, counted as an
      // error), and the Job's deletion or a spec change wakes the pass sooner.
      return retry(UpgradeReason.PreUpgradeBackupFailed);
    }
    const now = this.now();
    const w = await writeUpgrade(
      planeTarget(rc, this.d.client),
      ref,
      (cur) =>
        cur
          ? undefined
          : {
              upgrade: {
                targetVersion: to,
                fromVersion: from,
                startedAt: stamp(now),
                // Held where the workload builder holds it before the upgrade starts: no pod moves yet.
                currentPartition: obs.replicas,
                completedPods: [],
                ...(snap.jobName ? { preUpgradeSnapshotJobName: snap.jobName } : {}),
              },
            },
      rc.signal,
    );
    if (w.wrote) {
      upgradeTotal.inc({ ...labels, strategy: ROLLING });
      upgradeStatus.set(labels, UpgradeStatusValue.InProgress);
    }
    await this.condition(
      cluster,
      "True",
      UpgradeReason.Started,
      `rolling upgrade ${from} → ${to}: ${obs.replicas} pods, one at a time from the highest ordinal`,
      rc,
    );
    return requeueAfter(AT_ONCE_MS);
  }

  private async refused(
    cluster: OpenBaoCluster,
    decision: Extract<VersionDecision, { kind: "refused" }>,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    await this.releaseStaleLock(cluster, rc);
    await this.condition(cluster, "False", decision.reason, decision.message, rc);
    // A spec change (generation) wakes the next look.
    return done();
  }

  /** No upgrade due: correct an Upgrading condition left by a refusal or by a crash at the end. */
  private async nothingToDo(
    cluster: OpenBaoCluster,
    decision: Extract<VersionDecision, { kind: "none" }>,
    rc: ReconcileContext,
  ): Promise<ReconcileResult> {
    const ref = refOf(cluster);
    await this.releaseStaleLock(cluster, rc);
    const cond = cluster.status?.conditions?.find((c) => c.type === C.Upgrading);
    // 2 while the last upgrade's condition says it completed, 0 for a cluster that never upgraded.
    upgradeStatus.set(
      { namespace: ref.namespace, name: ref.name },
      cond?.reason === UpgradeReason.Complete ? UpgradeStatusValue.Succeeded : UpgradeStatusValue.None,
    );
    // No condition yet: a cluster that never upgraded gets no write (quiet passes stay quiet).
    if (!cond || cond.reason === UpgradeReason.Complete) return done();
    if (cond.status === "True")
      await this.condition(cluster, "False", UpgradeReason.Complete, decision.message, rc);
    else await this.condition(cluster, "False", decision.reason, decision.message, rc);
    return done();
  }

  /** An upgrade lock with no upgrade in flight is left from a crash after finishing: release it. */
  private async releaseStaleLock(cluster: OpenBaoCluster, rc: ReconcileContext): Promise<void> {
    const lock = cluster.status?.operationLock;
    const ref = refOf(cluster);
    if (lock?.operation !== "Upgrade" || !isUpgradeLock(ref.name, lock.holder)) return;
    await commitBeforeRelease(rc);
    await this.locks.release(ref, { operation: "Upgrade", holder: lock.holder! }, rc.signal);
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
      this.now(),
      rc.signal,
    );
  }
}

/** The lowest version the voters report, when every voter answered; else undefined. */
export function lowestVersion(obs: ClusterObservation): string | undefined {
  let low: string | undefined;
  for (const v of obs.voters) {
    const parsed = v.version ? parseVersion(v.version) : undefined;
    if (!parsed) return undefined;
    if (!low || compareVersions(parsed, parseVersion(low)!) < 0) low = v.version;
  }
  return low;
}
