/**
 * Helm's kind orders, as the Helm 4 SDK defines them (pkg/release/v1/util, v4.0.0 to v4.2.x):
 * GitLab's operator renders GitLabCore with that SDK (its internal/render imports helm.sh/helm/v4)
 * and sorts with its install order. Helm 3 (3.x up to 3.21) has the same lists without the two
 * webhook configuration kinds, so there they are unknown kinds: after every listed kind, by name.
 * Helm 4 installs them last of the listed kinds and removes them first, validating before mutating,
 * so a webhook never admits (or blocks) the objects of a release half installed or half removed.
 */
export const INSTALL_ORDER: readonly string[] = [
  "PriorityClass",
  "Namespace",
  "NetworkPolicy",
  "ResourceQuota",
  "LimitRange",
  "PodSecurityPolicy",
  "PodDisruptionBudget",
  "ServiceAccount",
  "Secret",
  "SecretList",
  "ConfigMap",
  "StorageClass",
  "PersistentVolume",
  "PersistentVolumeClaim",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleList",
  "ClusterRoleBinding",
  "ClusterRoleBindingList",
  "Role",
  "RoleList",
  "RoleBinding",
  "RoleBindingList",
  "Service",
  "DaemonSet",
  "Pod",
  "ReplicationController",
  "ReplicaSet",
  "Deployment",
  "HorizontalPodAutoscaler",
  "StatefulSet",
  "Job",
  "CronJob",
  "IngressClass",
  "Ingress",
  "APIService",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
];

/**
 * Helm 4's uninstall order: the webhook configurations first (validating, then mutating), then
 * nearly the install order reversed (Service goes right after the ingress kinds, before workloads).
 */
export const UNINSTALL_ORDER: readonly string[] = [
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "APIService",
  "Ingress",
  "IngressClass",
  "Service",
  "CronJob",
  "Job",
  "StatefulSet",
  "HorizontalPodAutoscaler",
  "Deployment",
  "ReplicaSet",
  "ReplicationController",
  "Pod",
  "DaemonSet",
  "RoleBindingList",
  "RoleBinding",
  "RoleList",
  "Role",
  "ClusterRoleBindingList",
  "ClusterRoleBinding",
  "ClusterRoleList",
  "ClusterRole",
  "CustomResourceDefinition",
  "PersistentVolumeClaim",
  "PersistentVolume",
  "StorageClass",
  "ConfigMap",
  "SecretList",
  "Secret",
  "ServiceAccount",
  "PodDisruptionBudget",
  "PodSecurityPolicy",
  "LimitRange",
  "ResourceQuota",
  "NetworkPolicy",
  "Namespace",
  "PriorityClass",
];

export type KindOrder = "install" | "uninstall";

const ranks: Record<KindOrder, Map<string, number>> = {
  install: new Map(INSTALL_ORDER.map((k, i) => [k, i])),
  uninstall: new Map(UNINSTALL_ORDER.map((k, i) => [k, i])),
};

/** Position of a kind in one of Helm's orders; kinds Helm does not list share the last place. */
export const kindRank = (kind: string, order: KindOrder = "install"): number =>
  ranks[order].get(kind) ?? ranks[order].size;

/** Go's string comparison (bytes), not the locale's: Helm compares names and kinds with `<`. */
export const compareBytes = (a: string, b: string): number =>
  Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

/**
 * Helm's lessByKind as a comparator: listed kinds by their place, unlisted ones after them and
 * among themselves by kind name (bytes). Equal kinds compare 0, so a stable sort keeps their order.
 */
export function compareKinds(a: string, b: string, order: KindOrder = "install"): number {
  const rank = ranks[order];
  const x = rank.get(a);
  const y = rank.get(b);
  if (x === undefined && y === undefined) return compareBytes(a, b);
  if (x === undefined) return 1;
  if (y === undefined) return -1;
  return x - y;
}
