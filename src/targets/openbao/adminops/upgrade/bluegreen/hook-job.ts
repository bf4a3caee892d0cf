import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../../../apis/openbaocluster-names.js";
import { JOB, POD } from "../../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { ApiError } from "../../../../../runtime/errors.js";
import type { EventRecorder } from "../../../../../runtime/events.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf } from "../../../cluster-ref.js";
import { buildHookJob, type HookObservation, type HookSpec, hookJobName, hookOutcome } from "./hook.js";
import type { BlueGreenStatus } from "./types.js";

/** Where this attempt's hook Job stands; NotStarted when there is none yet. Reads only. */
export async function observeHook(
  client: KubeClient,
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
): Promise<HookObservation> {
  const ref = refOf(cluster);
  const jobName = hookJobName(ref.name, bg);
  const job = await client.getOrUndefined<KubeObject>(JOB, jobName, ref.namespace);
  if (!job) return { state: "NotStarted", jobName };
  const pods = await client.list<KubeObject>(POD, {
    namespace: ref.namespace,
    labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
  });
  return hookOutcome(job, pods.items);
}

/** Creates this attempt's hook Job; one created by an earlier pass or process is kept. */
export async function startHook(
  deps: { client: KubeClient; events: EventRecorder },
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
  hook: HookSpec,
  clusterDomain: string,
): Promise<void> {
  const job = buildHookJob(cluster, bg, hook, clusterDomain);
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
    note: `Job ${job.metadata.name} validates green (${bg.greenRevision}) before promotion`,
  });
}
