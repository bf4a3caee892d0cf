import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoAnnotation, OpenBaoLabel } from "../../../../../apis/openbaocluster-names.js";
import { JOB, POD, SECRET } from "../../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { ApiError } from "../../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf } from "../../../cluster-ref.js";
import type { OpenBaoTargetConfig } from "../../../config.js";
import { objectKey } from "../../../executor/contract.js";
import { Component } from "../../../identity.js";
import { tlsEnabled, tlsSecretName } from "../../../workload/statefulsets/build.js";
import { buildExecutorJob } from "../../jobs/build.js";
import { jobOutcome } from "../../jobs/result.js";
import { ensureExecutorServiceAccount, snapshotUploadContract } from "../../jobs/snapshot-upload.js";
import {
  backupServiceAccount,
  planSnapshot,
  type SnapshotStrategy,
  snapshotJobName,
  snapshotKeyId,
  snapshotRequested,
  upgradeServiceAccount,
} from "./plan.js";

/**
 * The pre-upgrade snapshot: before a strategy moves anything, one executor Job streams a Raft
 * snapshot to spec.backup's target. Called on every pass of an upgrade that has not started yet; it
 * creates the Job the first time and afterwards only reports where that Job stands. It writes no
 * status: the upgrade manager records the Job's name once it moves on, and the Job itself (its
 * deterministic name, its annotations, its terminal state) is what a restarted operator reads back.
 */

export interface PreUpgradeSnapshotDeps {
  client: KubeClient;
  /** One event when the Job is created; none per pass. */
  events?: EventRecorder;
  config: Pick<OpenBaoTargetConfig, "executorImage">;
  now?: () => Date;
}

export interface PreUpgradeSnapshotOptions {
  /** Stable for one upgrade (e.g. "2.6.2-to-2.7.2"): the same id always maps to the same Job. */
  upgradeId: string;
  /** Which strategy asks (blue-green also honours spec.upgrade.blueGreen.preUpgradeSnapshot). */
  strategy?: SnapshotStrategy;
  signal?: AbortSignal;
}

export interface PreUpgradeSnapshotOutcome {
  state: "NotRequested" | "Running" | "Succeeded" | "Failed";
  jobName?: string;
  /** Upstream's reason: PreUpgradeBackupFailed for a failed Job, the missing piece's otherwise. */
  reason?: string;
  message?: string;
  /** Object key the snapshot was (or is being) written to. */
  key?: string;
}

export const PreUpgradeSnapshotEvent = { JobCreated: "PreUpgradeSnapshotJobCreated" } as const;
export const PreUpgradeBackupFailed = "PreUpgradeBackupFailed";

/** How long a finished snapshot Job stays: long enough for a failure to be read and looked at. */
const SNAPSHOT_JOB_TTL_SECONDS = 24 * 3600;
/** A snapshot that has not finished in an hour has hung: the Job fails and the upgrade says so. */
const SNAPSHOT_DEADLINE_SECONDS = 3600;

export async function ensurePreUpgradeSnapshot(
  deps: PreUpgradeSnapshotDeps,
  cluster: OpenBaoCluster,
  opts: PreUpgradeSnapshotOptions,
): Promise<PreUpgradeSnapshotOutcome> {
  if (!snapshotRequested(cluster, opts.strategy)) return { state: "NotRequested" };
  if (!opts.upgradeId.trim()) throw new Error("ensurePreUpgradeSnapshot: upgradeId must not be empty");
  const ref = refOf(cluster);
  const jobName = snapshotJobName(ref.name, opts.upgradeId);

  // A Job under this name is this upgrade's: report it whatever the spec says now.
  const existing = await deps.client.getOrUndefined<KubeObject>(JOB, jobName, ref.namespace);
  if (existing) return report(deps, existing, jobName, ref.namespace);

  const caSecret = tlsEnabled(cluster) ? tlsSecretName(cluster) : undefined;
  const u = cluster.spec.upgrade;
  const b = cluster.spec.backup;
  const wanted = [
    u?.tokenSecretRef?.name,
    b?.tokenSecretRef?.name,
    b?.target?.credentialsSecretRef?.name,
    caSecret,
  ].filter((s): s is string => !!s?.trim());
  const present = new Set<string>();
  for (const s of new Set(wanted))
    if (await deps.client.getOrUndefined(SECRET, s, ref.namespace)) present.add(s);
  const plan = planSnapshot({
    cluster,
    secretsPresent: present,
    caSecret,
    defaultImage: deps.config.executorImage,
  });
  if (!plan.ok) return { state: "Failed", reason: plan.reason, message: plan.message };

  const now = (deps.now ?? (() => new Date()))();
  const key = objectKey({
    pathPrefix: plan.target.pathPrefix,
    namespace: ref.namespace,
    cluster: ref.name,
    time: now,
    id: snapshotKeyId(opts.upgradeId),
  });
  const sa = plan.authFrom === "upgrade" ? upgradeServiceAccount(ref) : backupServiceAccount(ref);
  await ensureExecutorServiceAccount(deps.client, cluster, sa, Component.Upgrade, opts.signal);
  const job = buildExecutorJob({
    cluster,
    name: jobName,
    component: Component.Upgrade,
    image: plan.image,
    contract: snapshotUploadContract(cluster, plan.target, key, plan.auth),
    serviceAccountName: sa,
    labels: { [OpenBaoLabel.BackupType]: "pre-upgrade" },
    annotations: {
      [OpenBaoAnnotation.BackupKey]: key,
      [OpenBaoAnnotation.BackupType]: "pre-upgrade",
      [OpenBaoAnnotation.UpgradeRunID]: opts.upgradeId,
    },
    ttlSecondsAfterFinished: SNAPSHOT_JOB_TTL_SECONDS,
    activeDeadlineSeconds: SNAPSHOT_DEADLINE_SECONDS,
  });
  try {
    await deps.client.create(JOB, job);
  } catch (e) {
    // Another pass (or a process that died after this call) created it first: that one counts.
    if (!(e instanceof ApiError && e.code === 409)) throw e;
    const raced = await deps.client.getOrUndefined<KubeObject>(JOB, jobName, ref.namespace);
    if (raced) return report(deps, raced, jobName, ref.namespace);
    throw e;
  }
  deps.events?.record(cluster, {
    type: "Normal",
    reason: PreUpgradeSnapshotEvent.JobCreated,
    action: "Upgrade",
    note: `Job ${jobName} streams a Raft snapshot to ${key} before the upgrade (${opts.upgradeId})`,
  });
  return { state: "Running", jobName, key, message: `Job ${jobName} writes ${key}` };
}

async function report(
  deps: PreUpgradeSnapshotDeps,
  job: KubeObject,
  jobName: string,
  namespace: string,
): Promise<PreUpgradeSnapshotOutcome> {
  const pods = await deps.client.list<KubeObject>(POD, {
    namespace,
    labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
  });
  const outcome = jobOutcome(job, pods.items);
  const annotated = job.metadata.annotations?.[OpenBaoAnnotation.BackupKey];
  if (outcome.state === "running")
    return { state: "Running", jobName, key: annotated, message: `Job ${jobName} is running` };
  if (outcome.state === "succeeded") {
    const key = outcome.key ?? annotated;
    const size = outcome.size !== undefined ? ` (${outcome.size} bytes)` : "";
    return { state: "Succeeded", jobName, key, message: `snapshot ${key ?? jobName} uploaded${size}` };
  }
  return {
    state: "Failed",
    jobName,
    key: annotated,
    reason: PreUpgradeBackupFailed,
    message: `pre-upgrade snapshot Job ${jobName} failed (${outcome.reason}): ${outcome.message}`.slice(
      0,
      4000,
    ),
  };
}

/** The same, bound to its dependencies: the shape the upgrade managers take as their snapshot port. */
export function preUpgradeSnapshotPort(
  deps: PreUpgradeSnapshotDeps,
): (cluster: OpenBaoCluster, opts: PreUpgradeSnapshotOptions) => Promise<PreUpgradeSnapshotOutcome> {
  return (cluster, opts) => ensurePreUpgradeSnapshot(deps, cluster, opts);
}
