import type { OpenBaoCluster, OpenBaoClusterSpec } from "../../../../apis/openbaocluster.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { voterRefs } from "../../cluster-ref.js";
import {
  type ClusterRef,
  Component,
  clusterLabels,
  clusterNames,
  clusterRefOf,
  podName,
} from "../../identity.js";

/**
 * The pods' identity: their ServiceAccount, and a Role that lets OpenBao's Kubernetes service
 * registration keep its labels (active, sealed, initialized, version) on its own pods. Pure.
 */

export interface IdentityCluster {
  metadata: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec: Pick<OpenBaoClusterSpec, "replicas" | "readReplicas"> & {
    /** Upstream's spec.serviceAccount; read when the schema carries it. */
    serviceAccount?: { name?: string; annotations?: Record<string, string> };
  };
  /** status.blueGreen names the serving and the green revision's voter sets. */
  status?: Pick<NonNullable<OpenBaoCluster["status"]>, "blueGreen">;
}

export function identityRef(c: IdentityCluster): ClusterRef {
  if (!c.metadata.name || !c.metadata.namespace)
    throw new Error("metadata.name and metadata.namespace are required");
  return clusterRefOf(c.metadata);
}

export function serviceAccountName(c: IdentityCluster): string {
  return c.spec.serviceAccount?.name || clusterNames(identityRef(c)).serviceAccount;
}

/** Upstream names the service-registration Role and RoleBinding after the ServiceAccount. */
export const serviceRegistrationRoleName = (c: IdentityCluster): string => `${serviceAccountName(c)}-role`;
export const serviceRegistrationBindingName = (c: IdentityCluster): string =>
  `${serviceAccountName(c)}-rolebinding`;

/**
 * Every pod the cluster runs at its full size: voters of each live revision (the serving one and a
 * blue-green green), then read replicas.
 */
export function clusterPodNames(c: IdentityCluster): string[] {
  const ref = identityRef(c);
  const out: string[] = [];
  const voterSets = voterRefs({ metadata: c.metadata, status: c.status });
  for (const set of voterSets) for (let i = 0; i < (c.spec.replicas ?? 3); i++) out.push(podName(set, i));
  for (let i = 0; i < (c.spec.readReplicas?.replicas ?? 0); i++)
    out.push(podName(ref, i, Component.ReadReplica));
  return out;
}

export function serviceAccount(c: IdentityCluster): KubeObject {
  const ref = identityRef(c);
  const annotations = c.spec.serviceAccount?.annotations;
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: {
      name: serviceAccountName(c),
      namespace: ref.namespace,
      labels: clusterLabels(ref),
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
  };
}

/**
 * get/update/patch on the cluster's own pods, by name: `patch pods` on any pod would let a
 * compromised OpenBao change another workload's image, so the grant stops at these names.
 * `extraPodNames` is for pods of another generation (a blue-green revision) that also register.
 */
export function serviceRegistrationRole(
  c: IdentityCluster,
  extraPodNames: readonly string[] = [],
): KubeObject {
  const ref = identityRef(c);
  const pods = [...new Set([...clusterPodNames(c), ...extraPodNames])];
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: {
      name: serviceRegistrationRoleName(c),
      namespace: ref.namespace,
      labels: clusterLabels(ref),
    },
    rules: [{ apiGroups: [""], resources: ["pods"], resourceNames: pods, verbs: ["get", "update", "patch"] }],
  };
}

export function serviceRegistrationBinding(c: IdentityCluster): KubeObject {
  const ref = identityRef(c);
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: {
      name: serviceRegistrationBindingName(c),
      namespace: ref.namespace,
      labels: clusterLabels(ref),
    },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: serviceRegistrationRoleName(c) },
    subjects: [{ kind: "ServiceAccount", name: serviceAccountName(c), namespace: ref.namespace }],
  };
}
