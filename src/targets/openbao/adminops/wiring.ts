import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterManagers } from "../../../apis/openbaocluster-names.js";
import { JOB, POD, STATEFULSET } from "../../../runtime/builtin-types.js";
import {
  Controller,
  combineResults,
  type Predicate,
  type ReconcileResult,
} from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import { type KubeObject, splitKey } from "../../../runtime/types.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { OpenBaoTargetConfig } from "../config.js";
import { LABEL_CLUSTER, serverPodCluster } from "../identity.js";
import type { ImageVerifier } from "../imageverify/verifier.js";
import { withAdminOpsPass } from "../opslifecycle/index.js";
import { platformOf } from "../platform.js";
import { POD_PRUNING } from "../pod-cache.js";
import type { SnapshotStoreFactory } from "./backup/ports.js";
import { BackupReconciler } from "./backup/reconciler.js";
import { adminOpsJobPodCluster } from "./jobs/job-pods.js";
import { type RestartOptions, RuntimeRestart } from "./restart/manager.js";
import { BlueGreenUpgrade } from "./upgrade/bluegreen/manager.js";
import { type StrategyHandler, UpgradeManager } from "./upgrade/core/manager.js";
import type { PreUpgradeSnapshotPort } from "./upgrade/core/snapshot-port.js";
import type { RollingOptions } from "./upgrade/rolling/manager.js";
import { ensurePreUpgradeSnapshot } from "./upgrade/snapshot/index.js";

export const ADMINOPS_CONTROLLER_NAME = OpenBaoClusterManagers.adminOpsController;

/**
 * What wakes the AdminOps controller: a spec change (spec.version, a request), a new trigger
 * annotation, or a status change that can unblock it (initialization, the lock being released, the
 * running version observed). Its own status writes also pass, and are cheap: a pass with nothing
 * due writes nothing.
 */
const adminOpsRelevant: Predicate<OpenBaoCluster> = (o, n) =>
  !o ||
  o.metadata.generation !== n.metadata.generation ||
  o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp ||
  o.metadata.annotations?.["openbao.org/trigger-backup"] !==
    n.metadata.annotations?.["openbao.org/trigger-backup"] ||
  o.status?.initialized !== n.status?.initialized ||
  o.status?.currentVersion !== n.status?.currentVersion ||
  o.status?.operationLock?.holder !== n.status?.operationLock?.holder;

export interface AdminOpsWiring {
  stores: SnapshotStoreFactory;
  /** Replaces the pre-upgrade snapshot (adminops/upgrade/snapshot's ensurePreUpgradeSnapshot). */
  preUpgradeSnapshot?: PreUpgradeSnapshotPort;
  /** Replaces the BlueGreen strategy (adminops/upgrade/bluegreen's BlueGreenUpgrade by default). */
  blueGreen?: StrategyHandler;
  rolling?: RollingOptions;
  /** spec.runtime.restartAt's rolling restart (adminops/restart). */
  restart?: RestartOptions;
  /** Checks the executor, snapshot and hook images (spec.operatorImageVerification); shared with the workload. */
  imageVerifier?: ImageVerifier;
}

/**
 * The AdminOps controller: its own Controller and work queue next to the workload one, so a backup
 * waiting on a Job or an upgrade waiting on a pod never delays workload repair (and the reverse).
 * One pass runs the upgrade first, then the runtime restart, then the backup: while an upgrade holds the operation lock, the
 * backup reports the contention it always does and waits.
 */
export function setupAdminOps(
  manager: Manager,
  config: OpenBaoTargetConfig,
  clusters: Informer<OpenBaoCluster>,
  wiring: AdminOpsWiring,
): void {
  const jobs = manager.informer<KubeObject>(JOB, { labelSelector: LABEL_CLUSTER });
  // A rolling upgrade waits for a replaced pod to come back Ready: the pods' and the StatefulSet's
  // changes are what end each wait. Both are the workload controller's informers (same selector,
  // same cache mode): a narrower or slimmer second watch would cache the same objects twice.
  const pods = manager.informer<KubeObject>(POD, { labelSelector: LABEL_CLUSTER, prune: POD_PRUNING });
  const statefulSets = manager.informer<KubeObject>(STATEFULSET, {
    labelSelector: LABEL_CLUSTER,
    keepManagedFields: true,
  });
  const backups = new BackupReconciler({
    client: manager.client,
    reader: manager.reader,
    events: manager.events,
    log: manager.log,
    config,
    clusters,
    stores: wiring.stores,
    ...(wiring.imageVerifier ? { imageVerifier: wiring.imageVerifier } : {}),
  });
  const verifier = wiring.imageVerifier ? { imageVerifier: wiring.imageVerifier } : {};
  const snapshotDeps = { client: manager.client, events: manager.events, config, ...verifier };
  // How the upgrade and restart managers reach a cluster's OpenBao, and the audience of an upgrade
  // ServiceAccount's token for spec.upgrade.jwtAuthRole.
  const access = {
    clusterDomain: config.clusterDomain,
    reader: manager.reader,
    jwtAudience: config.openBaoAudience,
  };
  const upgrades = new UpgradeManager({
    client: manager.client,
    reader: manager.reader,
    events: manager.events,
    clusters,
    access,
    snapshot:
      wiring.preUpgradeSnapshot ??
      ((cluster, opts) =>
        ensurePreUpgradeSnapshot(snapshotDeps, cluster, {
          ...opts,
          strategy: "RollingUpdate",
        })),
    blueGreen:
      wiring.blueGreen ??
      new BlueGreenUpgrade({
        client: manager.client,
        events: manager.events,
        ...verifier,
        access,
        jobStartTimeoutMs: config.jobStartTimeoutMs,
        platform: platformOf(config),
        snapshot: (cluster, opts) =>
          (
            wiring.preUpgradeSnapshot ??
            ((c, o) =>
              ensurePreUpgradeSnapshot(snapshotDeps, c, {
                ...o,
                strategy: "BlueGreen",
              }))
          )(cluster, opts),
      }).handle,
    rolling: wiring.rolling,
  });
  const restarts = new RuntimeRestart({
    client: manager.client,
    reader: manager.reader,
    events: manager.events,
    clusters,
    access,
    options: wiring.restart,
  });
  const controller = new Controller({
    name: ADMINOPS_CONTROLLER_NAME,
    log: manager.log,
    concurrency: config.concurrency,
    reconcile: async (key, rc) => {
      // One AdminOps status write per pass: the three halves stage their changes in one pass,
      // committed at the end (only the lock writes earlier, and a commit just before a lock is
      // released or a backup Job created, so what they protect is recorded first).
      const { namespace = "", name } = splitKey(key);
      return withAdminOpsPass(manager.client, { namespace, name }, rc, async (ctx) => {
        // Upgrade first: when both are due, the upgrade takes the lock and the backup waits. A
        // failing half must not starve the others: they still run, then the first error goes to
        // the queue's backoff.
        let upgrade: ReconcileResult;
        let restart: ReconcileResult;
        let backup: ReconcileResult;
        let failed: { error: unknown } | undefined;
        try {
          upgrade = await upgrades.reconcile(key, ctx);
        } catch (error) {
          ctx.signal.throwIfAborted();
          failed = { error };
        }
        // The runtime restart after the upgrade (an upgrade in flight holds the lock; it waits).
        try {
          restart = await restarts.reconcile(key, ctx);
        } catch (error) {
          ctx.signal.throwIfAborted();
          failed ??= { error };
        }
        try {
          backup = await backups.reconcile(key, ctx);
        } catch (error) {
          ctx.signal.throwIfAborted();
          failed ??= { error };
        }
        if (failed) throw failed.error;
        return combineResults(combineResults(upgrade, restart), backup);
      });
    },
  });
  controller.watchPrimary(clusters, adminOpsRelevant);
  // A backup Job finishing is the moment to record its result.
  controller.watchOwned(jobs, OPENBAOCLUSTER);
  controller.watchOwned(statefulSets, OPENBAOCLUSTER);
  // Voter pods only (any revision), as before the informers were shared: Job pods wake nothing here.
  controller.watchMapped(pods, serverPodCluster);
  // The pods of its Jobs: one that cannot start (image pull, scheduling, a missing Secret) is
  // reported within moments, and the wait for it is bounded (adminops/jobs/start-health.ts).
  controller.watchMapped(pods, adminOpsJobPodCluster);
  manager.add(controller);
}
