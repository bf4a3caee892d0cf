import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { type ExecutorJob, toEnvAndMounts } from "../../executor/contract.js";
import { type ComponentName, clusterLabels } from "../../identity.js";
import type { Platform } from "../../platform.js";
import { namedPullSecrets } from "../../validate/secret-refs.js";
import { JOB_UID, oneShotJob, RESTRICTED_CONTAINER_SECURITY } from "./one-shot.js";

/**
 * The one executor Job builder: backup, restore and (later) the pre-upgrade snapshot all run the
 * operator's own image with the executor subcommand, and differ only in the contract value they pass.
 * Pure. Everything the executor reads comes from the contract (executor/contract.ts), so the builder
 * and the executor cannot disagree about a variable or a mount path.
 */

/** The subcommand of the operator's CLI that runs inside the Job (after the image's entrypoint). */
export const EXECUTOR_ARGS = ["executor"] as const;

/** V8 heap for the executor: snapshots stream through, so a small heap is enough at any size. */
const EXECUTOR_HEAP_MB = 96;

export interface ExecutorJobInput {
  cluster: OpenBaoCluster;
  /** Deterministic name (one attempt, one name); the caller derives it from the window or request. */
  name: string;
  component: ComponentName;
  image: string;
  contract: ExecutorJob;
  /**
   * ServiceAccount the pod runs as: its projected token is what JWT auth presents. No API token is
   * mounted (automountServiceAccountToken false); the executor never talks to Kubernetes.
   */
  serviceAccountName: string;
  /** Extra labels and annotations, e.g. openbao.org/backup-key so the key is visible on the Job. */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Labels on the pod only: the store target's workload identity (workload-identity.ts). */
  podLabels?: Record<string, string>;
  ttlSecondsAfterFinished?: number;
  /** Hard cap on one run; the Job is failed by Kubernetes past it. */
  activeDeadlineSeconds?: number;
  /** Owner of the Job; the cluster by default (restore may pass its OpenBaoRestore). */
  owner?: KubeObject;
  /** Whether the pod pins its uid, gid and fsGroup (one-shot.ts); kubernetes if unset. */
  platform?: Platform;
}

export function buildExecutorJob(inp: ExecutorJobInput): KubeObject {
  const c = inp.cluster;
  const { env, volumes, volumeMounts } = toEnvAndMounts(inp.contract);
  const labels = {
    ...clusterLabels({ name: c.metadata.name!, namespace: c.metadata.namespace! }, inp.component),
    ...inp.labels,
  };
  const container = {
    name: "executor",
    image: inp.image,
    imagePullPolicy: "IfNotPresent",
    args: [...EXECUTOR_ARGS],
    env: [...env, { name: "NODE_OPTIONS", value: `--max-old-space-size=${EXECUTOR_HEAP_MB}` }],
    volumeMounts: [...volumeMounts, { name: "tmp", mountPath: "/tmp" }],
    // The controller reads the result from here; FallbackToLogsOnError also explains a crash that
    // happened before the executor could write its line.
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "FallbackToLogsOnError",
    resources: {
      requests: { cpu: "50m", memory: "64Mi" },
      limits: { memory: "256Mi" },
    },
    securityContext: { ...RESTRICTED_CONTAINER_SECURITY, readOnlyRootFilesystem: true },
  };
  return oneShotJob({
    appArmor: c.spec.workloadHardening?.appArmorEnabled === true,
    name: inp.name,
    namespace: c.metadata.namespace!,
    labels,
    ...(inp.podLabels && Object.keys(inp.podLabels).length > 0 ? { podLabels: inp.podLabels } : {}),
    ...(inp.annotations ? { annotations: inp.annotations } : {}),
    owner: inp.owner ?? c,
    container,
    volumes: [...volumes, { name: "tmp", emptyDir: { sizeLimit: "16Mi" } }],
    imagePullSecrets: namedPullSecrets(c.spec.imagePullSecrets),
    serviceAccountName: inp.serviceAccountName,
    fsGroup: JOB_UID,
    ...(inp.platform ? { platform: inp.platform } : {}),
    ...(inp.ttlSecondsAfterFinished !== undefined
      ? { ttlSecondsAfterFinished: inp.ttlSecondsAfterFinished }
      : {}),
    ...(inp.activeDeadlineSeconds ? { activeDeadlineSeconds: inp.activeDeadlineSeconds } : {}),
  });
}
