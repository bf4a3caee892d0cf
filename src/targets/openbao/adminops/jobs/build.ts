import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { ownerReferenceFor } from "../../../../runtime/ownership.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { type ExecutorJob, toEnvAndMounts } from "../../executor/contract.js";
import { type ComponentName, clusterLabels } from "../../identity.js";

/**
 * The one executor Job builder: backup, restore and (later) the pre-upgrade snapshot all run the
 * operator's own image with the executor subcommand, and differ only in the contract value they pass.
 * Pure. Everything the executor reads comes from the contract (executor/contract.ts), so the builder
 * and the executor cannot disagree about a variable or a mount path.
 */

/** The subcommand of the operator's CLI that runs inside the Job (after the image's entrypoint). */
export const EXECUTOR_ARGS = ["executor"] as const;

/** Finished Jobs stay this long for `kubectl logs` and the controller to read their result. */
export const DEFAULT_TTL_SECONDS = 3600;

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
  ttlSecondsAfterFinished?: number;
  /** Hard cap on one run; the Job is failed by Kubernetes past it. */
  activeDeadlineSeconds?: number;
  /** Owner of the Job; the cluster by default (restore may pass its OpenBaoRestore). */
  owner?: KubeObject;
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
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    },
  };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: inp.name,
      namespace: c.metadata.namespace,
      labels,
      ...(inp.annotations ? { annotations: inp.annotations } : {}),
      ownerReferences: [ownerReferenceFor(inp.owner ?? c, true)],
    },
    spec: {
      // One attempt per window: a failed run is recorded as a failure, never retried behind the
      // controller's back (a retry would be a second upload under the same key).
      backoffLimit: 0,
      ttlSecondsAfterFinished: inp.ttlSecondsAfterFinished ?? DEFAULT_TTL_SECONDS,
      ...(inp.activeDeadlineSeconds ? { activeDeadlineSeconds: inp.activeDeadlineSeconds } : {}),
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          serviceAccountName: inp.serviceAccountName,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            runAsGroup: 65532,
            fsGroup: 65532,
            seccompProfile: { type: "RuntimeDefault" },
          },
          ...(c.spec.imagePullSecrets ? { imagePullSecrets: c.spec.imagePullSecrets } : {}),
          containers: [container],
          volumes: [...volumes, { name: "tmp", emptyDir: { sizeLimit: "16Mi" } }],
        },
      },
    },
  };
}
