import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreManagers } from "../../../apis/openbaorestore-names.js";
import { JOB, POD } from "../../../runtime/builtin-types.js";
import { Controller, generationChanged } from "../../../runtime/controller.js";
import type { Manager } from "../../../runtime/manager.js";
import type { KubeObject } from "../../../runtime/types.js";
import { restoreJobPodOwner } from "../adminops/jobs/job-pods.js";
import type { OpenBaoTargetConfig } from "../config.js";
import { LABEL_CLUSTER } from "../identity.js";
import { POD_PRUNING } from "../pod-cache.js";
import type { RestoreJobs, SnapshotProbe } from "./ports.js";
import { RestoreReconciler } from "./reconciler.js";
import { OPENBAORESTORE } from "./types.js";

export const RESTORE_CONTROLLER_NAME = OpenBaoRestoreManagers.controller;

export interface RestorePorts {
  probe: SnapshotProbe;
  jobs: RestoreJobs;
}

/**
 * The restore controller: its own Controller and queue, so a restore waiting on validation or a Job
 * never holds up workload repair or backups. Woken by its requests and the Jobs they own.
 */
export function setupRestore(manager: Manager, config: OpenBaoTargetConfig, ports: RestorePorts): void {
  const restores = manager.informer<OpenBaoRestore>(OPENBAORESTORE);
  const jobs = manager.informer<KubeObject>(JOB, { labelSelector: LABEL_CLUSTER });
  // The target's one pod cache (same selector and pruning as the workload's): a restore Job's pod
  // that cannot start wakes its restore at once.
  const pods = manager.informer<KubeObject>(POD, { labelSelector: LABEL_CLUSTER, prune: POD_PRUNING });
  const reconciler = new RestoreReconciler({
    client: manager.client,
    events: manager.events,
    log: manager.log,
    restores,
    probe: ports.probe,
    jobs: ports.jobs,
    jobStartTimeoutMs: config.jobStartTimeoutMs,
  });
  const controller = new Controller({
    name: RESTORE_CONTROLLER_NAME,
    log: manager.log,
    concurrency: config.concurrency,
    reconcile: (key, ctx) => reconciler.reconcile(key, ctx),
  });
  // The spec is immutable: only creation, deletion and finalizer changes matter; own status writes
  // do not wake it again.
  controller.watchPrimary(restores, generationChanged);
  controller.watchOwned(jobs, OPENBAORESTORE);
  controller.watchMapped(pods, (pod) => restoreJobPodOwner(pod, jobs, OPENBAORESTORE.kind));
  manager.add(controller);
}
