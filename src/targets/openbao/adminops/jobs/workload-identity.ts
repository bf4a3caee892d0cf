import type { BackupTarget } from "../../../../apis/openbaocluster.js";

/**
 * A store target's cloud workload identity (upstream 0.5's `target.workloadIdentity`): annotations
 * for the ServiceAccount a snapshot Job runs as (e.g. `eks.amazonaws.com/role-arn`,
 * `iam.gke.io/gcp-service-account`, `azure.workload.identity/client-id`) and labels for its pods
 * (e.g. `azure.workload.identity/use: "true"`), which the cloud's own webhook reads to give the pod
 * its credentials. Pure; the operator's own labels always win over these.
 */
export interface WorkloadIdentity {
  serviceAccountAnnotations: Record<string, string>;
  podLabels: Record<string, string>;
}

export function workloadIdentityOf(target: BackupTarget | undefined): WorkloadIdentity {
  const wi = target?.workloadIdentity;
  return {
    serviceAccountAnnotations: { ...(wi?.serviceAccountAnnotations ?? {}) },
    podLabels: { ...(wi?.podLabels ?? {}) },
  };
}
