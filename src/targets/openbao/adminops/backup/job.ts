import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoAnnotation, OpenBaoLabel } from "../../../../apis/openbaocluster-names.js";
import { JOB } from "../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../runtime/client.js";
import type { ReconcileContext } from "../../../../runtime/controller.js";
import { ApiError } from "../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../runtime/events.js";
import { refOf } from "../../cluster-ref.js";
import type { OpenBaoTargetConfig } from "../../config.js";
import { Component } from "../../identity.js";
import { withBootstrapRole } from "../../oidc-roles.js";
import { platformOf } from "../../platform.js";
import { buildExecutorJob } from "../jobs/build.js";
import {
  ensureExecutorServiceAccount,
  executorAuth,
  snapshotUploadContract,
} from "../jobs/snapshot-upload.js";
import { workloadIdentityOf } from "../jobs/workload-identity.js";
import { backupServiceAccount } from "../upgrade/snapshot/plan.js";
import { BackupEvent } from "./events.js";
import { backupTypeOfJob } from "./schedule.js";

/**
 * The attempt's executor Job (and the ServiceAccount it runs as), created once: the name is the
 * attempt's, so a pass that resumes after a crash finds the Job it created and makes no second.
 */
export async function ensureBackupJob(
  d: {
    client: KubeClient;
    events: EventRecorder;
    /** platform: the pod's ids; openBaoAudience: the audience of the Job's projected token for a JWT login. */
    config: Pick<OpenBaoTargetConfig, "platform" | "openBaoAudience">;
  },
  cluster: OpenBaoCluster,
  jobName: string,
  key: string,
  image: string,
  rc: ReconcileContext,
): Promise<void> {
  const ref = refOf(cluster);
  const spec = cluster.spec.backup!;
  const sa = backupServiceAccount(ref);
  await ensureExecutorServiceAccount(d.client, cluster, sa, Component.Backup, rc.signal);
  // Prerequisites made sure one of the two is set.
  const contract = snapshotUploadContract(
    cluster,
    spec.target,
    key,
    executorAuth(withBootstrapRole(cluster, "backup", spec), d.config.openBaoAudience)!,
  );
  const job = buildExecutorJob({
    cluster,
    name: jobName,
    component: Component.Backup,
    image,
    contract,
    serviceAccountName: sa,
    labels: { [OpenBaoLabel.BackupType]: backupTypeOfJob(jobName) },
    podLabels: workloadIdentityOf(spec.target).podLabels,
    annotations: { [OpenBaoAnnotation.BackupKey]: key },
    platform: platformOf(d.config),
  });
  try {
    await d.client.create(JOB, job);
    d.events.record(cluster, {
      type: "Normal",
      reason: BackupEvent.JobCreated,
      action: "Backup",
      note: `Job ${jobName} streams a Raft snapshot to ${key}`,
    });
  } catch (e) {
    // Same window, same name: the Job of this attempt exists already (a pass resumed after a crash).
    if (!(e instanceof ApiError && e.code === 409)) throw e;
  }
}
