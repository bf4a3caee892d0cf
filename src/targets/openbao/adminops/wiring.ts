import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { Controller, type Predicate } from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import type { KubeObject } from "../../../runtime/types.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { OpenBaoTargetConfig } from "../config.js";
import { LABEL_CLUSTER } from "../identity.js";
import type { SnapshotStoreFactory } from "./backup/ports.js";
import { BackupReconciler, JOB } from "./backup/reconciler.js";

export const ADMINOPS_CONTROLLER_NAME = "openbaocluster-adminops";

/**
 * What wakes the AdminOps controller: a spec change, a new trigger annotation, or a status change
 * that can unblock it (initialization, the lock being released). Its own status writes also pass, and
 * are cheap: a pass with nothing due writes nothing.
 */
const adminOpsRelevant: Predicate<OpenBaoCluster> = (o, n) =>
  !o ||
  o.metadata.generation !== n.metadata.generation ||
  o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp ||
  o.metadata.annotations?.["openbao.org/trigger-backup"] !==
    n.metadata.annotations?.["openbao.org/trigger-backup"] ||
  o.status?.initialized !== n.status?.initialized ||
  o.status?.operationLock?.holder !== n.status?.operationLock?.holder;

export interface AdminOpsWiring {
  stores: SnapshotStoreFactory;
}

/**
 * The AdminOps controller: its own Controller and work queue next to the workload one, so a backup
 * waiting on a Job never delays workload repair (and the reverse). Backups now; upgrades later.
 */
export function setupAdminOps(
  manager: Manager,
  config: OpenBaoTargetConfig,
  clusters: Informer<OpenBaoCluster>,
  wiring: AdminOpsWiring,
): void {
  const jobs = manager.informer<KubeObject>(JOB, { labelSelector: LABEL_CLUSTER });
  const backups = new BackupReconciler({
    client: manager.client,
    events: manager.events,
    log: manager.log,
    config,
    clusters,
    stores: wiring.stores,
  });
  const controller = new Controller({
    name: ADMINOPS_CONTROLLER_NAME,
    log: manager.log,
    concurrency: config.concurrency,
    reconcile: (key, ctx) => backups.reconcile(key, ctx),
  });
  controller.watchPrimary(clusters, adminOpsRelevant);
  // A backup Job finishing is the moment to record its result.
  controller.watchOwned(jobs, OPENBAOCLUSTER);
  manager.add(controller);
}
