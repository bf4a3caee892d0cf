import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterManagers, OpenBaoLabel } from "../../../apis/openbaocluster-names.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { Controller, type Predicate } from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import type { OpenBaoTargetConfig } from "../config.js";
import { OPENBAORESTORE } from "../restore/types.js";
import { RestoreTestReconciler } from "./reconciler.js";

export const RESTORE_TEST_CONTROLLER_NAME = OpenBaoClusterManagers.restoreTestController;

/** What wakes a source: its spec, a new backup, a recorded outcome; a throwaway's or restore's progress. */
const sourceRelevant: Predicate<OpenBaoCluster> = (o, n) =>
  !o ||
  o.metadata.generation !== n.metadata.generation ||
  o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp ||
  o.status?.backup?.lastBackupKey !== n.status?.backup?.lastBackupKey;

const sourceOf = (o: { metadata: { namespace?: string; labels?: Record<string, string> } }): string[] => {
  const src = o.metadata.labels?.[OpenBaoLabel.RestoreTestOf];
  return src && o.metadata.namespace ? [`${o.metadata.namespace}/${src}`] : [];
};

/**
 * The restore-test controller (spec.backup.restoreTest): its own queue, so a test that waits minutes
 * for its throwaway cluster never delays backups, upgrades or workload repair.
 */
export function setupRestoreTests(
  manager: Manager,
  config: OpenBaoTargetConfig,
  clusters: Informer<OpenBaoCluster>,
): void {
  const restores = manager.informer<OpenBaoRestore>(OPENBAORESTORE);
  const reconciler = new RestoreTestReconciler({
    client: manager.client,
    reader: manager.reader,
    events: manager.events,
    log: manager.log,
    clusters,
    restores,
    clusterDomain: config.clusterDomain,
  });
  const controller = new Controller({
    name: RESTORE_TEST_CONTROLLER_NAME,
    log: manager.log,
    concurrency: config.concurrency,
    reconcile: (key, ctx) => reconciler.reconcile(key, ctx),
  });
  controller.watchPrimary(clusters, sourceRelevant);
  // The throwaway forming (initialized) and the restore ending are the moments a run moves on.
  controller.watchMapped(clusters, sourceOf, (o, n) => !o || o.status?.initialized !== n.status?.initialized);
  controller.watchMapped(restores, sourceOf, (o, n) => !o || o.status?.phase !== n.status?.phase);
  manager.add(controller);
}
