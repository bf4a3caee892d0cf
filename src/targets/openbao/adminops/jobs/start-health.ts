import { JobStartFailureAnnotation, OpenBaoClusterReason } from "../../../../apis/openbaocluster-names.js";
import { collate } from "../../../../runtime/text-order.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { isoSeconds } from "../../../../runtime/utc-time.js";
import { scrub } from "../../workload/pod-trouble.js";

/**
 * Whether a Job the openbao target started has a pod that started, read from the Job and its pods.
 * Pure. One reading for every Job-following path (scheduled backup, restore, pre-upgrade snapshot,
 * blue-green validation hook), so "cannot start" means the same thing whichever operation waits,
 * and no operation holds the cluster's lock on a Job that never runs.
 *
 * The bound is counted from when the operation started its Job: the time the operation persisted
 * for its attempt when it has one (status.backup.lastAttemptTime, the restore's startTime), else the
 * Job's creation. Both are read back by a restarted operator: no timer has to survive a restart.
 */

/** Default bound: long enough for a slow registry, short enough not to block upgrades for long. */
export const DEFAULT_JOB_START_TIMEOUT_MS = 5 * 60_000;

/** The Job controller makes a pod within seconds; none after this is trouble of its own. */
const NO_POD_GRACE_MS = 60_000;

/** Container waiting reasons that say the container cannot be made as the pod asks. */
const START_FAILURES: ReadonlySet<string> = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "CreateContainerConfigError",
  "CreateContainerError",
]);

export interface StartTrouble {
  /** The pod's own word: ImagePullBackOff, Unschedulable, CreateContainerConfigError, … */
  reason: string;
  /** One line naming the pod and what Kubernetes said; no secret values. */
  message: string;
}

export type JobStartHealth =
  /** A container ran (or runs), or the Job finished: the outcome reader takes it from here. */
  | { started: true }
  | {
      started: false;
      /** What keeps it from starting, when the pods say; none while it is just slow. */
      trouble?: StartTrouble;
      /** When the operation gives up on this Job. */
      deadline: Date;
      expired: boolean;
    };

interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface ContainerStatus {
  name: string;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown; terminated?: unknown };
}
interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
}

function finished(job: KubeObject): boolean {
  const conds = ((job["status"] as { conditions?: PodCondition[] } | undefined)?.conditions ?? []).filter(
    (c) => c.status === "True",
  );
  return conds.some((c) => c.type === "Complete" || c.type === "Failed");
}

/** True once a container of the pod has run: from then on its exit, not its start, is the news. */
function podStarted(pod: KubeObject): boolean {
  const st = (pod["status"] ?? {}) as PodStatus;
  if (st.phase === "Running" || st.phase === "Succeeded" || st.phase === "Failed") return true;
  return [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])].some(
    (c) => c.state?.running !== undefined || c.state?.terminated !== undefined,
  );
}

/** Kubernetes' own reason on PodScheduled=False, passed on as the trouble's reason. */
const POD_UNSCHEDULABLE = "Unschedulable";
/** Ours: the Job made no pod at all (quota, admission, a missing ServiceAccount). */
const NO_POD = "NoPod";

/** Why one pod cannot start, when its status says so. */
export function podStartTrouble(pod: KubeObject): StartTrouble | undefined {
  const st = (pod["status"] ?? {}) as PodStatus;
  const name = pod.metadata.name ?? "";
  const unschedulable = st.conditions?.find(
    (c) => c.type === "PodScheduled" && c.status === "False" && c.reason === POD_UNSCHEDULABLE,
  );
  if (unschedulable)
    return {
      reason: POD_UNSCHEDULABLE,
      message: `pod ${name} cannot be scheduled${unschedulable.message ? `: ${scrub(unschedulable.message)}` : ""}`,
    };
  for (const c of [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])]) {
    const w = c.state?.waiting;
    if (!w?.reason || !START_FAILURES.has(w.reason)) continue;
    return {
      reason: w.reason,
      message: `pod ${name}: container ${c.name} is in ${w.reason}${w.message ? `: ${scrub(w.message)}` : ""}`,
    };
  }
  return undefined;
}

/**
 * Where the Job's start stands at `now`. `pods` are the Job's pods (any order); the newest one speaks
 * for the Job. A Job that finished, or whose pod ran, is `started` whatever else is true.
 */
export function jobStartHealth(
  job: KubeObject,
  pods: readonly KubeObject[],
  now: Date,
  timeoutMs: number = DEFAULT_JOB_START_TIMEOUT_MS,
  startedAt?: string,
): JobStartHealth {
  if (finished(job) || pods.some(podStarted)) return { started: true };
  const recorded = Date.parse(startedAt ?? "");
  const created = Date.parse(job.metadata.creationTimestamp ?? "");
  const since = Number.isFinite(recorded) ? recorded : Number.isFinite(created) ? created : now.getTime();
  const deadline = new Date(since + timeoutMs);
  const expired = now.getTime() >= deadline.getTime();
  const newest = [...pods].sort((a, b) =>
    collate(b.metadata.creationTimestamp ?? "", a.metadata.creationTimestamp ?? ""),
  )[0];
  let trouble = newest ? podStartTrouble(newest) : undefined;
  if (!newest && now.getTime() - since >= NO_POD_GRACE_MS)
    trouble = {
      reason: NO_POD,
      message: `Job ${job.metadata.name} has no pod (see the Job's events: quota, admission or a missing ServiceAccount)`,
    };
  return { started: false, ...(trouble ? { trouble } : {}), deadline, expired };
}

/** The sentence a waiting operation shows while its Job cannot start. */
export function notStartedMessage(jobName: string, h: Extract<JobStartHealth, { started: false }>): string {
  const what = h.trouble ? `${h.trouble.reason}: ${h.trouble.message}` : "its pod has not started yet";
  return `Job ${jobName} cannot start (${what}); the operation fails at ${stamp(h.deadline)} unless it starts`;
}

/** The failure a Job that never started comes to (reason JobStartTimeout). */
export function startTimeoutFailure(
  jobName: string,
  h: Extract<JobStartHealth, { started: false }>,
  timeoutMs: number,
): { reason: typeof OpenBaoClusterReason.JobStartTimeout; message: string } {
  const what = h.trouble
    ? `${h.trouble.reason}: ${h.trouble.message}`
    : "its pod was created but never ran (see the pod's events)";
  return {
    reason: OpenBaoClusterReason.JobStartTimeout,
    message: `Job ${jobName} did not start within ${Math.round(timeoutMs / 1000)}s (${what})`,
  };
}

/**
 * The start failure the operator wrote on a Job before ending it (see endUnstartedJob), for a pass
 * that finds the Job already failed: its pods, which showed the trouble, are gone by then.
 */
export function recordedStartFailure(
  job: KubeObject,
): { reason: typeof OpenBaoClusterReason.JobStartTimeout; message: string } | undefined {
  const text = job.metadata.annotations?.[JobStartFailureAnnotation];
  return text ? { reason: OpenBaoClusterReason.JobStartTimeout, message: text } : undefined;
}

function stamp(d: Date): string {
  return isoSeconds(d);
}
