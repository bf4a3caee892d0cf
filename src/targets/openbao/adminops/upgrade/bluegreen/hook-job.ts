import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../../../apis/openbaocluster-names.js";
import { JOB, POD } from "../../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { ApiError } from "../../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf } from "../../../cluster-ref.js";
import type { Platform } from "../../../platform.js";
import { endUnstartedJob } from "../../jobs/end-unstarted.js";
import {
  DEFAULT_JOB_START_TIMEOUT_MS,
  jobStartHealth,
  notStartedMessage,
  startTimeoutFailure,
} from "../../jobs/start-health.js";
import { validationHookJobName } from "../job-names.js";
import { deleteRunJob, upgradeRunIdOf } from "../run-jobs.js";
import {
  buildHookJob,
  type HookObservation,
  type HookSpec,
  hookAttempt,
  hookOutcome,
  legacyHookJobName,
} from "./hook.js";
import type { BlueGreenStatus } from "./types.js";

/**
 * This attempt's hook Job: under upstream's `<cluster>-validation-hook` when its run id is this
 * attempt's, or under the per-attempt name an earlier version gave it. Reads only.
 */
async function attemptJob(
  client: KubeClient,
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
): Promise<KubeObject | undefined> {
  const ref = refOf(cluster);
  const legacy = await client.getOrUndefined<KubeObject>(JOB, legacyHookJobName(ref.name, bg), ref.namespace);
  if (legacy) return legacy;
  const job = await client.getOrUndefined<KubeObject>(JOB, validationHookJobName(ref.name), ref.namespace);
  return job && upgradeRunIdOf(job) === hookAttempt(bg) ? job : undefined;
}

/**
 * Where this attempt's hook Job stands; NotStarted when there is none yet. A Job whose pod cannot
 * start is Running with the reason, and Failed past the start bound (the Job is then ended, the one
 * write here): a hook that never ran has not validated green.
 */
export async function observeHook(
  client: KubeClient,
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
  start: { now: Date; timeoutMs: number } = { now: new Date(), timeoutMs: DEFAULT_JOB_START_TIMEOUT_MS },
): Promise<HookObservation> {
  const job = await attemptJob(client, cluster, bg);
  if (!job) return { state: "NotStarted", jobName: validationHookJobName(refOf(cluster).name) };
  const jobName = job.metadata.name!;
  const pods = await client.list<KubeObject>(POD, {
    namespace: job.metadata.namespace ?? refOf(cluster).namespace,
    labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
  });
  const seen = hookOutcome(job, pods.items);
  if (seen.state !== "Running") return seen;
  const health = jobStartHealth(job, pods.items, start.now, start.timeoutMs);
  if (health.started) return seen;
  if (!health.expired)
    return health.trouble ? { ...seen, notStarted: notStartedMessage(jobName, health) } : seen;
  const failure = startTimeoutFailure(jobName, health, start.timeoutMs);
  await endUnstartedJob(client, job, failure);
  return { state: "Failed", jobName, message: `never started: ${failure.message}` };
}

/**
 * Creates this attempt's hook Job; one created by an earlier pass or process is kept. An earlier
 * attempt's Job under the same name (upstream's name is per cluster) is deleted first, running or
 * not: its verdict was about a green that is gone. This attempt's Job is then made on a later pass.
 */
export async function startHook(
  deps: { client: KubeClient; events: EventRecorder; platform?: Platform },
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
  hook: HookSpec,
  clusterDomain: string,
): Promise<void> {
  const job = buildHookJob(cluster, bg, hook, clusterDomain, deps.platform);
  const name = job.metadata.name!;
  const ns = job.metadata.namespace!;
  const earlier = await deps.client.getOrUndefined<KubeObject>(JOB, name, ns);
  if (earlier) {
    if (upgradeRunIdOf(earlier) === hookAttempt(bg)) return;
    await deleteRunJob(deps.client, earlier);
    return;
  }
  try {
    await deps.client.create(JOB, job);
  } catch (e) {
    if (e instanceof ApiError && e.code === 409) return;
    throw e;
  }
  deps.events.record(cluster, {
    type: "Normal",
    reason: OpenBaoClusterReason.PrePromotionHookStarted,
    action: "Upgrade",
    note: `Job ${name} validates green (${bg.greenRevision}) before promotion`,
  });
}
