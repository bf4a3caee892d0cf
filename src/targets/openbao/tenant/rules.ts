/**
 * The namespaced access the openbao target needs where it manages clusters: the same rules the
 * chart grants it per listed namespace (`po.namespacedRules.openbao` in the chart's _targets.tpl,
 * which the chart-install test holds to the API server's audit log), so a tenant's namespace is
 * served exactly as a listed one. A unit test holds the two lists to each other.
 *
 * Secrets are the exception, as upstream does it: create, patch, delete and get go only to the names
 * the clusters there use (secrets.ts). Upstream grants no list or watch on Secrets at all; this
 * target reads its Secrets through one informer per namespace, so list and watch stay
 * namespace-wide, and with them read access to every Secret there (as the chart grants today).
 * Narrowing that needs the target to read Secrets by name first.
 */

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({
  apiGroups,
  resources,
  verbs,
});

const WRITE = ["get", "list", "watch", "create", "patch"];

/** The chart's rules for the openbao target in one namespace, Secrets left out. */
export const TARGET_RULES_WITHOUT_SECRETS: readonly PolicyRule[] = Object.freeze([
  // create, delete: restore tests (spec.backup.restoreTest) make a throwaway cluster and its restore.
  rule(["openbao.org"], ["openbaoclusters"], ["get", "list", "watch", "create", "patch", "delete"]),
  rule(["openbao.org"], ["openbaoclusters/status"], ["patch"]),
  rule(["openbao.org"], ["openbaorestores"], ["get", "list", "watch", "create", "patch", "delete"]),
  rule(["openbao.org"], ["openbaorestores/status"], ["patch"]),
  rule(["batch"], ["jobs"], ["get", "list", "watch", "create"]),
  rule([""], ["configmaps"], [...WRITE, "delete"]),
  rule([""], ["services"], [...WRITE, "delete"]),
  rule([""], ["serviceaccounts"], WRITE),
  rule([""], ["serviceaccounts/token"], ["create"]),
  rule([""], ["persistentvolumeclaims"], ["get", "list", "watch", "create", "patch", "delete"]),
  rule([""], ["pods"], ["get", "list", "watch", "update", "patch", "delete"]),
  rule(["apps"], ["statefulsets"], [...WRITE, "delete"]),
  rule(["policy"], ["poddisruptionbudgets"], WRITE),
  rule(["networking.k8s.io"], ["networkpolicies"], WRITE),
  rule(["networking.k8s.io"], ["ingresses"], [...WRITE, "delete"]),
  rule(["networking.k8s.io"], ["ingressclasses"], ["get"]),
  rule(["rbac.authorization.k8s.io"], ["roles", "rolebindings"], WRITE),
  rule(
    ["gateway.networking.k8s.io"],
    ["httproutes", "tlsroutes", "backendtlspolicies"],
    [...WRITE, "delete"],
  ),
  rule(["gateway.networking.k8s.io"], ["gateways"], ["get", "list", "watch"]),
  rule(["monitoring.coreos.com"], ["servicemonitors"], [...WRITE, "delete"]),
  rule(["events.k8s.io"], ["events"], ["create", "patch"]),
]);

/**
 * In tenant mode the target also watches the OpenBaoTenants of each namespace it reconciles
 * (self-service ones), and the provisioner keeps their finalizer and status: the chart's
 * `po.tenantRules.openbao`, granted with tenancy.mode multi.
 */
export const TENANT_KIND_RULES: readonly PolicyRule[] = Object.freeze([
  rule(["openbao.org"], ["openbaotenants"], ["get", "list", "watch", "patch"]),
  rule(["openbao.org"], ["openbaotenants/status"], ["patch"]),
]);

/**
 * The tenant Role: the target's rules, the tenants' own, and Secrets only as far as its informer
 * reads them. Without the tenants' rules, the target's informer of OpenBaoTenants would be refused
 * in every namespace it onboarded.
 */
export const TENANT_ROLE_RULES: readonly PolicyRule[] = Object.freeze([
  ...TARGET_RULES_WITHOUT_SECRETS,
  ...TENANT_KIND_RULES,
  rule([""], ["secrets"], ["list", "watch"]),
]);
