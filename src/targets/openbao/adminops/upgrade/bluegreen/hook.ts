/**
 * Blue-green's pre-promotion hook (spec.upgrade.blueGreen.verification.prePromotionHook): a Job the
 * user's image runs once green is in sync and before it gets a vote. Its exit status decides: 0
 * lets promotion go on, anything else (or running past timeoutSeconds) is a validation failure,
 * which rolls back when autoRollback.onValidationFailure allows. Pure: the Job, its name, and what a
 * finished Job means. hook-job.ts does the I/O.
 *
 * The Job learns where green is from its environment (BAO_ADDR: green's first pod through the
 * headless Service; BAO_CACERT: the cluster CA when the listener uses TLS files), so a hook of
 * `bao status` or `bao read sys/health` needs no address of its own.
 */

import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { OpenBaoAnnotation, OpenBaoClusterReason } from "../../../../../apis/openbaocluster-names.js";
import type { KubeObject } from "../../../../../runtime/types.js";
import { refOf } from "../../../cluster-ref.js";
import { API_PORT, Component, clusterLabels, podAddress } from "../../../identity.js";
import type { Platform } from "../../../platform.js";
import { namedPullSecrets } from "../../../validate/secret-refs.js";
import { tlsEnabled, tlsSecretName } from "../../../workload/statefulsets/build.js";
import { oneShotJob, RESTRICTED_CONTAINER_SECURITY } from "../../jobs/one-shot.js";
import { recordedStartFailure } from "../../jobs/start-health.js";
import { validationHookJobName } from "../job-names.js";
import type { BlueGreenSettings, BlueGreenStatus } from "./types.js";

export type HookSpec = NonNullable<NonNullable<BlueGreenSettings["verification"]>["prePromotionHook"]>;

/** Upstream's container name, so `kubectl logs job/<name>-validation-hook -c validation` works. */
export const HOOK_CONTAINER = "validation";
/** The container's name in hook Jobs made before; still read, so such a Job's exit code is reported. */
const LEGACY_HOOK_CONTAINER = "hook";
export const HOOK_DEFAULT_TIMEOUT_SECONDS = 300;
const CA_DIR = "/var/run/openbao/ca";

/** Where the hook of one upgrade attempt stands, as the plan reads it. */
export interface HookObservation {
  state: "NotStarted" | "Running" | "Succeeded" | "Failed";
  jobName: string;
  message?: string;
  /** While Running: why its pod cannot start (jobs/start-health.ts). */
  notStarted?: string;
}

/**
 * The attempt a hook Job belongs to (its openbao.org/upgrade-run-id annotation): upstream's name
 * `<cluster>-validation-hook` is the same for every attempt, so a Job under it is this attempt's
 * only when this matches.
 */
export function hookAttempt(bg: BlueGreenStatus): string {
  return bg.operationID ?? bg.greenRevision ?? "attempt";
}

/**
 * The name an attempt's hook Job had before the hook took upstream's name: recognised, never
 * written, so an attempt whose hook was started by an earlier version still reads its Job.
 */
export function legacyHookJobName(cluster: string, bg: BlueGreenStatus): string {
  const suffix = `-pre-promotion-${hookAttempt(bg)}`.slice(0, 40);
  return `${cluster.slice(0, 63 - suffix.length).replace(/-+$/, "")}${suffix}`;
}

export function buildHookJob(
  cluster: OpenBaoCluster,
  bg: BlueGreenStatus,
  hook: HookSpec,
  clusterDomain: string,
  /** kubernetes (unset) pins the pod's uid and gid; openshift leaves them to the SCC. */
  platform?: Platform,
): KubeObject {
  const ref = refOf(cluster);
  const labels = clusterLabels(ref, Component.ValidationHook);
  const greenRef = { ...ref, revision: bg.greenRevision };
  const scheme = tlsEnabled(cluster) ? "https" : "http";
  const caSecret = tlsSecretName(cluster);
  const env = [
    {
      name: "BAO_ADDR",
      value: `${scheme}://${podAddress(greenRef, 0, Component.Server, clusterDomain)}:${API_PORT}`,
    },
    { name: "OPENBAO_CLUSTER", value: ref.name },
    { name: "OPENBAO_NAMESPACE", value: ref.namespace },
    { name: "OPENBAO_GREEN_REVISION", value: bg.greenRevision ?? "" },
    { name: "OPENBAO_GREEN_VERSION", value: bg.greenVersion ?? "" },
    ...(caSecret ? [{ name: "BAO_CACERT", value: `${CA_DIR}/ca.crt` }] : []),
  ];
  const container = {
    name: HOOK_CONTAINER,
    image: hook.image,
    imagePullPolicy: "IfNotPresent",
    ...(hook.command?.length ? { command: hook.command } : {}),
    ...(hook.args?.length ? { args: hook.args } : {}),
    env,
    ...(caSecret ? { volumeMounts: [{ name: "ca", mountPath: CA_DIR, readOnly: true }] } : {}),
    terminationMessagePolicy: "File",
    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "256Mi" } },
    // No read-only root: the image is the user's and may write where it likes.
    securityContext: RESTRICTED_CONTAINER_SECURITY,
  };
  return oneShotJob({
    appArmor: cluster.spec.workloadHardening?.appArmorEnabled === true,
    name: validationHookJobName(ref.name),
    namespace: ref.namespace,
    labels,
    annotations: { [OpenBaoAnnotation.UpgradeRunID]: hookAttempt(bg) },
    owner: cluster,
    container,
    ...(caSecret
      ? {
          volumes: [
            { name: "ca", secret: { secretName: caSecret, items: [{ key: "ca.crt", path: "ca.crt" }] } },
          ],
        }
      : {}),
    imagePullSecrets: namedPullSecrets(cluster.spec.imagePullSecrets),
    activeDeadlineSeconds: hook.timeoutSeconds ?? HOOK_DEFAULT_TIMEOUT_SECONDS,
    ...(platform ? { platform } : {}),
  });
}

interface JobCondition {
  type: string;
  status: string;
  reason?: string;
}
interface Terminated {
  exitCode?: number;
  reason?: string;
}

/**
 * What a hook Job's state means. Only the exit code and Kubernetes' own reasons are reported: the
 * hook's output is the user's and may hold secrets, so it stays in the pod's log.
 */
export function hookOutcome(job: KubeObject, pods: readonly KubeObject[]): HookObservation {
  const jobName = job.metadata.name ?? "";
  const conds = ((job["status"] as { conditions?: JobCondition[] } | undefined)?.conditions ?? []).filter(
    (c) => c.status === "True",
  );
  if (conds.some((c) => c.type === "Complete")) return { state: "Succeeded", jobName };
  const failed = conds.find((c) => c.type === "Failed");
  if (!failed) return { state: "Running", jobName };
  // Ended by the operator because its pod never started (hook-job.ts): that, not the deadline.
  const unstarted = recordedStartFailure(job);
  if (unstarted) return { state: "Failed", jobName, message: `never started: ${unstarted.message}` };
  if (failed.reason === OpenBaoClusterReason.DeadlineExceeded)
    return { state: "Failed", jobName, message: "did not finish within timeoutSeconds" };
  const terminated = pods
    .flatMap(
      (p) =>
        (
          p["status"] as
            | { containerStatuses?: { name: string; state?: { terminated?: Terminated } }[] }
            | undefined
        )?.containerStatuses ?? [],
    )
    .find((s) => (s.name === HOOK_CONTAINER || s.name === LEGACY_HOOK_CONTAINER) && s.state?.terminated)
    ?.state?.terminated;
  const how = terminated
    ? `exited with status ${terminated.exitCode ?? "?"}${terminated.reason && terminated.reason !== OpenBaoClusterReason.Error ? ` (${terminated.reason})` : ""}`
    : `failed (${failed.reason ?? "JobFailed"})`;
  return { state: "Failed", jobName, message: how };
}
