import { ownerReferenceFor } from "../../../../runtime/ownership.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { type Platform, pinsPodIds } from "../../platform.js";

/**
 * The shape every Job the AdminOps plane starts shares (executor runs, blue-green's pre-promotion
 * hook): one pod, one attempt, no API token, no service links, a non-root uid under the restricted
 * Pod Security profile, owned by the object it works for. Pure. The callers add what differs: the
 * container, its volumes, deadlines. On OpenShift the pod names no uid, gid or fsGroup: the
 * namespace's SCC assigns them (platform.ts).
 */

/** Finished Jobs stay this long for `kubectl logs` and the controller to read their result. */
export const DEFAULT_TTL_SECONDS = 3600;

/** The uid and gid the Jobs' pods run as (the operator image's non-root user). */
export const JOB_UID = 65532;

/** What the restricted Pod Security profile asks of every container; callers may add to it. */
export const RESTRICTED_CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
} as const;

export interface OneShotJobInput {
  /** spec.workloadHardening.appArmorEnabled: the runtime's default AppArmor profile. */
  appArmor?: boolean;
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** Extra labels on the pod only (a workload identity's selector); `labels` win over them. */
  podLabels?: Record<string, string>;
  annotations?: Record<string, string>;
  owner: KubeObject;
  container: Record<string, unknown>;
  volumes?: readonly Record<string, unknown>[];
  imagePullSecrets?: unknown;
  serviceAccountName?: string;
  /** Group owning mounted volumes, for a container that writes into them (not on OpenShift). */
  fsGroup?: number;
  /** kubernetes (unset) pins the uid, gid and fsGroup; openshift leaves them to the SCC. */
  platform?: Platform;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
}

export function oneShotJob(inp: OneShotJobInput): KubeObject {
  const ids = pinsPodIds(inp.platform)
    ? {
        runAsUser: JOB_UID,
        runAsGroup: JOB_UID,
        ...(inp.fsGroup !== undefined ? { fsGroup: inp.fsGroup } : {}),
      }
    : {};
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: inp.name,
      namespace: inp.namespace,
      labels: inp.labels,
      ...(inp.annotations ? { annotations: inp.annotations } : {}),
      ownerReferences: [ownerReferenceFor(inp.owner, true)],
    },
    spec: {
      // One attempt: a failure is the controller's to record, never retried behind its back (a
      // retried backup would upload twice under one key; a retried hook could pass a check the
      // first run failed).
      backoffLimit: 0,
      ttlSecondsAfterFinished: inp.ttlSecondsAfterFinished ?? DEFAULT_TTL_SECONDS,
      ...(inp.activeDeadlineSeconds ? { activeDeadlineSeconds: inp.activeDeadlineSeconds } : {}),
      template: {
        metadata: { labels: { ...inp.podLabels, ...inp.labels } },
        spec: {
          restartPolicy: "Never",
          ...(inp.serviceAccountName ? { serviceAccountName: inp.serviceAccountName } : {}),
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            ...ids,
            seccompProfile: { type: "RuntimeDefault" },
            ...(inp.appArmor ? { appArmorProfile: { type: "RuntimeDefault" } } : {}),
          },
          ...(inp.imagePullSecrets ? { imagePullSecrets: inp.imagePullSecrets } : {}),
          containers: [inp.container],
          ...(inp.volumes?.length ? { volumes: inp.volumes } : {}),
        },
      },
    },
  };
}
