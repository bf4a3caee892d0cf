import { OpenBaoClusterReason } from "../../../../apis/openbaocluster-names.js";
import { STATEFULSET } from "../../../../runtime/builtin-types.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { LABEL_CLUSTER, legacyNames } from "../../identity.js";
import { applyOwned, deleteIfOwned, type ServiceContext, type ServiceOutcome } from "../service-context.js";
import {
  type IdentityCluster,
  identityRef,
  serviceAccount,
  serviceAccountName,
  serviceRegistrationBinding,
  serviceRegistrationBindingName,
  serviceRegistrationRole,
  serviceRegistrationRoleName,
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
  await retireLegacyIdentity(ctx, cluster, changes);
  return {
    changes,
    ready: true,
    reason: OpenBaoClusterReason.Ready,
    message: `ServiceAccount ${serviceAccountName(cluster)} and its service-registration Role are current`,
  };
}

/**
 * The ServiceAccount `<name>` and Role and RoleBinding `<name>-service-registration` of a cluster
 * made before the names followed upstream. Its pods run as that account until they roll to the new
 * one, and their service registration needs its grant meanwhile: so all three go only once no
 * StatefulSet of the cluster asks for the old account and every one has rolled out.
 */
async function retireLegacyIdentity(
  ctx: ServiceContext,
  cluster: IdentityCluster,
  changes: string[],
): Promise<void> {
  const ref = identityRef(cluster);
  const legacy = legacyNames(ref);
  const sets = await ctx.reader.list(STATEFULSET, {
    namespace: ref.namespace,
    labelSelector: `${LABEL_CLUSTER}=${ref.name}`,
  });
  if (!sets.every((s) => rolledOutAway(s, legacy.serviceAccount))) return;
  const wanted = new Set([
    `ServiceAccount/${serviceAccountName(cluster)}`,
    `Role/${serviceRegistrationRoleName(cluster)}`,
    `RoleBinding/${serviceRegistrationBindingName(cluster)}`,
  ]);
  const rbac = "rbac.authorization.k8s.io/v1";
  const retired = [
    { apiVersion: rbac, kind: "RoleBinding", name: legacy.serviceRegistrationRole },
    { apiVersion: rbac, kind: "Role", name: legacy.serviceRegistrationRole },
    { apiVersion: "v1", kind: "ServiceAccount", name: legacy.serviceAccount },
  ];
  for (const r of retired)
    if (!wanted.has(`${r.kind}/${r.name}`))
      await deleteIfOwned(ctx, { ...r, namespace: ref.namespace }, changes);
}

/** Whether a StatefulSet's pods no longer run as `account`: its template names another, and it has rolled out. */
function rolledOutAway(set: KubeObject, account: string): boolean {
  const spec = set["spec"] as
    | { replicas?: number; template?: { spec?: { serviceAccountName?: string } } }
    | undefined;
  const status = (set["status"] ?? {}) as {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
  if ((spec?.template?.spec?.serviceAccountName ?? "default") === account) return false;
  return (
    status.observedGeneration === set.metadata.generation &&
    (status.replicas ?? 0) === (status.updatedReplicas ?? 0) &&
    status.currentRevision === status.updateRevision
  );
}
