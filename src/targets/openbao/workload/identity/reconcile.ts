import { OpenBaoClusterReason } from "../../../../apis/openbaocluster-names.js";
import { applyOwned, type ServiceContext, type ServiceOutcome } from "../service-context.js";
import {
  type IdentityCluster,
  serviceAccount,
  serviceAccountName,
  serviceRegistrationBinding,
  serviceRegistrationRole,
} from "./plan.js";

export interface IdentityOptions {
  /** Pods beyond the cluster's own StatefulSets that register too (blue-green revisions). */
  extraPodNames?: readonly string[];
}

/** The identity service: the pods' ServiceAccount and the service-registration Role and RoleBinding. */
export async function reconcileIdentity(
  ctx: ServiceContext,
  cluster: IdentityCluster,
  opts: IdentityOptions = {},
): Promise<ServiceOutcome> {
  const objects = [
    serviceAccount(cluster),
    serviceRegistrationRole(cluster, opts.extraPodNames),
    serviceRegistrationBinding(cluster),
  ];
  const changes: string[] = [];
  for (const obj of objects) await applyOwned(ctx, obj, changes);
  return {
    changes,
    ready: true,
    reason: OpenBaoClusterReason.Ready,
    message: `ServiceAccount ${serviceAccountName(cluster)} and its service-registration Role are current`,
  };
}
