import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import {
  OpenBaoAnnotation,
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../../../../apis/openbaocluster-names.js";
import { JOB, POD, SECRET } from "../../../../../runtime/builtin-types.js";
import { liveReader } from "../../../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { ApiError } from "../../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import { collate } from "../../../../../runtime/text-order.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf } from "../../../cluster-ref.js";
import type { OpenBaoTargetConfig } from "../../../config.js";
import { objectKey } from "../../../executor/contract.js";
import { type ClusterRef, Component, LABEL_CLUSTER } from "../../../identity.js";
import { operatorImage } from "../../../imageverify/check.js";
import type { ImageVerifier } from "../../../imageverify/verifier.js";
import { platformOf } from "../../../platform.js";
import { tlsEnabled, tlsSecretName } from "../../../workload/statefulsets/build.js";
import { buildExecutorJob } from "../../jobs/build.js";
import { endUnstartedJob } from "../../jobs/end-unstarted.js";
import { jobOutcome } from "../../jobs/result.js";
import { ensureExecutorServiceAccount, snapshotUploadContract } from "../../jobs/snapshot-upload.js";
import {
  DEFAULT_JOB_START_TIMEOUT_MS,
  jobStartHealth,
  notStartedMessage,
  startTimeoutFailure,
} from "../../jobs/start-health.js";
import { workloadIdentityOf } from "../../jobs/workload-identity.js";
import { deleteRunJob, upgradeRunIdOf } from "../run-jobs.js";
import {
  backupServiceAccount,
  planSnapshot,
  type SnapshotStrategy,
  snapshotJobIdentity,
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
  /** openBaoAudience: the Job's token audience (DEFAULT_OPENBAO_AUDIENCE when unset). */
  config: Pick<OpenBaoTargetConfig, "executorImage" | "jobStartTimeoutMs" | "platform"> &
    Partial<Pick<OpenBaoTargetConfig, "openBaoAudience">>;
  /** Checks the executor image under spec.operatorImageVerification; unset: not checked. */
  imageVerifier?: ImageVerifier;
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
  reason?: OpenBaoClusterReasonType;
  message?: string;
  /** Object key the snapshot was (or is being) written to. */
  key?: string;
  /** While Running: why its pod cannot start (jobs/start-health.ts), shown in the condition. */
  notStarted?: string;
}

/** Events go nowhere when the caller gave no recorder (the Warn policy's event among them). */
const SILENT = { record: () => {} };

export const PreUpgradeSnapshotEvent = {
  JobCreated: OpenBaoClusterReason.PreUpgradeSnapshotJobCreated,
} as const;

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
  // A Job of this upgrade, under whatever name it was made (upstream's, or this operator's own
  // `<name>-pre-upgrade-<hash>` from before): report it whatever the spec says now.
  const mine = await findUpgradeSnapshotJob(deps.client, ref, opts.upgradeId);
  if (mine) return report(deps, mine, mine.metadata.name!, ref.namespace);

  const strategy = opts.strategy ?? cluster.spec.upgrade?.strategy ?? "RollingUpdate";
  const identity = snapshotJobIdentity(cluster, strategy);
  const jobName = identity.name;
  // Upstream's name holds another upgrade's Job (the same generation asking for a new upgrade,
  // which only a changed running version does): that one goes first, once it has finished.
  const occupant = await deps.client.getOrUndefined<KubeObject>(JOB, jobName, ref.namespace);
  if (occupant) return makeRoom(deps, occupant, opts);

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
    ...(deps.config.openBaoAudience ? { audience: deps.config.openBaoAudience } : {}),
  });
  if (!plan.ok) return { state: "Failed", reason: plan.reason, message: plan.message };
  const executor = await operatorImage(
    deps.imageVerifier,
    { reader: liveReader(deps.client), events: deps.events ?? SILENT, signal: opts.signal },
    cluster,
    plan.image,
    strategy === "BlueGreen"
      ? OpenBaoClusterReason.BlueGreenSnapshotImageVerificationFailed
      : OpenBaoClusterReason.PreUpgradeBackupImageVerificationFailed,
    "pre-upgrade snapshot executor image",
  );
  if (!executor.ok) return { state: "Failed", reason: executor.reason, message: executor.message };

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
    component: identity.component,
    image: executor.image,
    contract: snapshotUploadContract(cluster, plan.target, key, plan.auth),
    serviceAccountName: sa,
    labels: identity.labels,
    podLabels: workloadIdentityOf(plan.target).podLabels,
    annotations: {
      ...identity.annotations,
      [OpenBaoAnnotation.BackupKey]: key,
      [OpenBaoAnnotation.BackupType]: "pre-upgrade",
      [OpenBaoAnnotation.UpgradeRunID]: opts.upgradeId,
    },
    ttlSecondsAfterFinished: SNAPSHOT_JOB_TTL_SECONDS,
    activeDeadlineSeconds: SNAPSHOT_DEADLINE_SECONDS,
    platform: platformOf(deps.config),
  });
  try {
    await deps.client.create(JOB, job);
  } catch (e) {
    // Another pass (or a process that died after this call) created it first: that one counts.
    if (!(e instanceof ApiError && e.code === 409)) throw e;
    const raced = await deps.client.getOrUndefined<KubeObject>(JOB, jobName, ref.namespace);
    if (raced && upgradeRunIdOf(raced) === opts.upgradeId) return report(deps, raced, jobName, ref.namespace);
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

/**
 * This upgrade's snapshot Job, found by what every one carries whatever its name: the cluster's
 * label and the annotations backup-type pre-upgrade and upgrade-run-id. The newest when there are
 * several (a Job deleted and made again).
 */
async function findUpgradeSnapshotJob(
  client: KubeClient,
  ref: ClusterRef,
  upgradeId: string,
): Promise<KubeObject | undefined> {
  const jobs = await client.list<KubeObject>(JOB, {
    namespace: ref.namespace,
    labelSelector: `${LABEL_CLUSTER}=${ref.name}`,
  });
  return jobs.items
    .filter(
      (j) =>
        j.metadata.annotations?.[OpenBaoAnnotation.BackupType] === "pre-upgrade" &&
        upgradeRunIdOf(j) === upgradeId,
    )
    .sort((a, b) => collate(b.metadata.creationTimestamp ?? "", a.metadata.creationTimestamp ?? ""))[0];
}

/**
 * Another upgrade's Job holds the name this one's needs. A finished one is deleted (its result was
 * read when its upgrade moved on, and stays in the object store and the events); one still running
 * is waited for. Either way this upgrade's Job is made on a later pass.
 */
async function makeRoom(
  deps: PreUpgradeSnapshotDeps,
  occupant: KubeObject,
  opts: PreUpgradeSnapshotOptions,
): Promise<PreUpgradeSnapshotOutcome> {
  const name = occupant.metadata.name!;
  const other = upgradeRunIdOf(occupant) ?? "an unknown upgrade";
  if (jobOutcome(occupant, []).state === "running")
    return {
      state: "Running",
      jobName: name,
      message: `Job ${name} of ${other} still runs; this upgrade's waits for its name`,
    };
  await deleteRunJob(deps.client, occupant);
  return {
    state: "Running",
    jobName: name,
    message: `deleted the finished Job ${name} of ${other}; this upgrade's (${opts.upgradeId}) takes its name next`,
  };
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
  let outcome = jobOutcome(job, pods.items);
  const annotated = job.metadata.annotations?.[OpenBaoAnnotation.BackupKey];
  if (outcome.state === "running") {
    const timeoutMs = deps.config.jobStartTimeoutMs ?? DEFAULT_JOB_START_TIMEOUT_MS;
    const health = jobStartHealth(job, pods.items, (deps.now ?? (() => new Date()))(), timeoutMs);
    if (health.started || !health.expired)
      return {
        state: "Running",
        jobName,
        key: annotated,
        message: `Job ${jobName} is running`,
        ...(!health.started && health.trouble ? { notStarted: notStartedMessage(jobName, health) } : {}),
      };
    // Never started: the snapshot fails, so the upgrade says so and gives the lock back.
    const failure = startTimeoutFailure(jobName, health, timeoutMs);
    await endUnstartedJob(deps.client, job, failure);
    outcome = { state: "failed", ...failure };
  }
  if (outcome.state === "succeeded") {
    const key = outcome.key ?? annotated;
    const size = outcome.size !== undefined ? ` (${outcome.size} bytes)` : "";
    return { state: "Succeeded", jobName, key, message: `snapshot ${key ?? jobName} uploaded${size}` };
  }
  return {
    state: "Failed",
    jobName,
    key: annotated,
    reason: OpenBaoClusterReason.PreUpgradeBackupFailed,
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
