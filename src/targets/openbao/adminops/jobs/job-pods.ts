import type { KubeObject } from "../../../../runtime/types.js";
import { Component, LABEL_CLUSTER, LABEL_COMPONENT } from "../../identity.js";

/**
 * Which controller a Job pod's change wakes. The target's pod informer (selected by the cluster
 * label, status kept) already holds the pods of its Jobs, since their template carries the cluster's
 * labels: a pod going to ImagePullBackOff or Unschedulable wakes the operation that waits on it
 * through that one watch, instead of a poll.
 */

/** The label the Job controller puts on its pods (older clusters: `job-name`). */
export const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

/** The Job a pod belongs to, from the Job controller's label. */
export function jobNameOfPod(pod: Pick<KubeObject, "metadata">): string | undefined {
  const l = pod.metadata.labels ?? {};
  return l[JOB_NAME_LABEL] ?? l["job-name"];
}

/** Components of the Jobs the AdminOps controller follows (backup, pre-upgrade snapshot, hook). */
const ADMINOPS_JOB_COMPONENTS: ReadonlySet<string> = new Set([
  Component.Backup,
  Component.Upgrade,
  Component.UpgradeSnapshot,
  Component.ValidationHook,
]);

/** The key of the cluster whose AdminOps Job this pod runs; none for other pods. */
export function adminOpsJobPodCluster(pod: Pick<KubeObject, "metadata">): string[] {
  const l = pod.metadata.labels ?? {};
  const cluster = l[LABEL_CLUSTER];
  const component = l[LABEL_COMPONENT];
  if (!cluster || !component || !pod.metadata.namespace || !jobNameOfPod(pod)) return [];
  return ADMINOPS_JOB_COMPONENTS.has(component) ? [`${pod.metadata.namespace}/${cluster}`] : [];
}

/**
 * The key of the OpenBaoRestore whose Job this pod runs: the pod's Job (looked up in the Jobs
 * cache) names its controlling owner.
 */
export function restoreJobPodOwner(
  pod: Pick<KubeObject, "metadata">,
  jobs: { get(key: string): KubeObject | undefined },
  ownerKind: string,
): string[] {
  const ns = pod.metadata.namespace;
  const jobName = jobNameOfPod(pod);
  if (!ns || !jobName || pod.metadata.labels?.[LABEL_COMPONENT] !== Component.Restore) return [];
  const owner = jobs
    .get(`${ns}/${jobName}`)
    ?.metadata.ownerReferences?.find((o) => o.controller === true && o.kind === ownerKind);
  return owner ? [`${ns}/${owner.name}`] : [];
}
