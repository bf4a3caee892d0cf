/**
 * What onboarding one namespace takes, as upstream's provisioner does it, for the openbao target:
 * from a tenant, the clusters and restores in its target namespace and the openbao process's own
 * namespace and ServiceAccount, the objects to apply there (under upstream's names), the namespace
 * labels to set (none when a platform layer owns them: upstream's namespacePodSecurityLabels mode
 * external), and the Roles to remove; or the reason the tenant is refused. Offboarding removes
 * the Roles and RoleBindings only once no cluster remains; quota, limits and labels stay, as
 * upstream leaves them. Pure: the controller does the I/O.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import type { OpenBaoTenant } from "../../../apis/openbaotenant.js";
import type { KubeObject } from "../../../runtime/types.js";
import type { PodSecurityLabelMode } from "../config.js";
import { LABEL_COMPONENT, LABEL_MANAGED_BY, MANAGED_BY } from "../identity.js";
import { type DeniedNamespaces, refuseTarget, type TenantRefusal } from "./guard.js";
import { type PolicyRule, TENANT_ROLE_RULES } from "./rules.js";
import { secretAllowLists } from "./secrets.js";

/** Upstream's object names in a tenant's namespace. */
export const TenantObjectNames = {
  role: "openbao-operator-tenant-role",
  roleBinding: "openbao-operator-tenant-rolebinding",
  secretsWriterRole: "openbao-operator-tenant-secrets-writer",
  secretsWriterRoleBinding: "openbao-operator-tenant-secrets-writer-rolebinding",
  secretsReaderRole: "openbao-operator-tenant-secrets-reader",
  secretsReaderRoleBinding: "openbao-operator-tenant-secrets-reader-rolebinding",
  resourceQuota: "openbao-operator-tenant-quota",
  limitRange: "openbao-operator-tenant-limits",
} as const;

/** Names the tenant that provisioned an object, `<namespace>/<name>` (a label value cannot hold the slash). */
export const TENANT_ANNOTATION = "openbao.org/tenant";
export const TENANT_COMPONENT = "tenant-provisioner";

/** Pod Security Admission at restricted, as upstream labels a tenant namespace. */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = Object.freeze({
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/audit": "restricted",
  "pod-security.kubernetes.io/warn": "restricted",
});

/** Upstream's quota when the tenant sets none. */
export const DEFAULT_QUOTA = Object.freeze({
  hard: {
    pods: "50",
    "requests.cpu": "20",
    "requests.memory": "64Gi",
    "limits.cpu": "40",
    "limits.memory": "128Gi",
  },
});

/** Upstream's container defaults when the tenant sets no limit range. */
export const DEFAULT_LIMIT_RANGE = Object.freeze({
  limits: [
    {
      type: "Container",
      default: { cpu: "500m", memory: "512Mi" },
      defaultRequest: { cpu: "100m", memory: "128Mi" },
    },
  ],
});

export interface OperatorIdentity {
  /** Where the openbao process runs; a tenant there may onboard another namespace. */
  namespace: string;
  /** The openbao process's ServiceAccount, in `namespace`: the subject of every RoleBinding. */
  serviceAccount: string;
}

export type { PodSecurityLabelMode };

export interface TenantPlanInput {
  tenant: OpenBaoTenant;
  /** The OpenBaoClusters and OpenBaoRestores in the target namespace. */
  clusters: readonly OpenBaoCluster[];
  restores?: readonly OpenBaoRestore[];
  operator: OperatorIdentity;
  /** Default enforce. */
  podSecurityLabels?: PodSecurityLabelMode;
  /** The namespaces never onboarded besides the operator's own (default: upstream's list). */
  denied?: DeniedNamespaces;
}

export interface RoleRef {
  kind: "Role" | "RoleBinding";
  name: string;
}

export type TenantPlan =
  | { refused: TenantRefusal }
  | {
      refused?: undefined;
      namespace: string;
      /**
       * Merged into the namespace's labels; the others are left as they are. Undefined: the
       * namespace is not written at all (Pod Security labels owned elsewhere).
       */
      namespaceLabels?: Record<string, string>;
      apply: KubeObject[];
      /** Allow-list Roles (and their bindings) whose list is empty: deleted if present. */
      remove: RoleRef[];
    };

const RBAC = "rbac.authorization.k8s.io/v1";

/** The labels of every object the provisioner writes; its informers select on them. */
export const TENANT_LABELS: Readonly<Record<string, string>> = Object.freeze({
  [LABEL_MANAGED_BY]: MANAGED_BY,
  [LABEL_COMPONENT]: TENANT_COMPONENT,
});

/** Selects the provisioner's objects (its informers in the target's namespaces). */
export const TENANT_SELECTOR = `${LABEL_COMPONENT}=${TENANT_COMPONENT}`;

function meta(name: string, namespace: string, tenant: OpenBaoTenant) {
  return {
    name,
    namespace,
    labels: { ...TENANT_LABELS },
    annotations: { [TENANT_ANNOTATION]: `${tenant.metadata.namespace}/${tenant.metadata.name}` },
  };
}

function role(name: string, ns: string, tenant: OpenBaoTenant, rules: readonly PolicyRule[]): KubeObject {
  return {
    apiVersion: RBAC,
    kind: "Role",
    metadata: meta(name, ns, tenant),
    rules: rules.map((r) => ({ ...r })),
  };
}

function binding(name: string, roleName: string, ns: string, tenant: OpenBaoTenant, op: OperatorIdentity) {
  return {
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: meta(name, ns, tenant),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
    subjects: [{ kind: "ServiceAccount", name: op.serviceAccount, namespace: op.namespace }],
  } satisfies KubeObject;
}

export function planTenant(input: TenantPlanInput): TenantPlan {
  const { tenant, operator } = input;
  const ns = tenant.spec.targetNamespace;
  const refused = refuseTarget(tenant.metadata.namespace ?? "", ns, operator.namespace, input.denied);
  if (refused) return { refused };
  const n = TenantObjectNames;
  const apply: KubeObject[] = [
    role(n.role, ns, tenant, TENANT_ROLE_RULES),
    binding(n.roleBinding, n.role, ns, tenant, operator),
  ];
  const remove: RoleRef[] = [];
  const lists = secretAllowLists(input.clusters, input.restores);
  // create cannot be limited by name (the object has none yet when it is authorized), as upstream.
  const writer: PolicyRule[] = [
    { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
    {
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: lists.write,
      verbs: ["get", "patch", "delete"],
    },
  ];
  const reader: PolicyRule[] = [
    { apiGroups: [""], resources: ["secrets"], resourceNames: lists.read, verbs: ["get"] },
  ];
  for (const [names, roleName, bindingName, rules] of [
    [lists.write, n.secretsWriterRole, n.secretsWriterRoleBinding, writer],
    [lists.read, n.secretsReaderRole, n.secretsReaderRoleBinding, reader],
  ] as const) {
    if (names.length === 0)
      remove.push({ kind: "RoleBinding", name: bindingName }, { kind: "Role", name: roleName });
    else apply.push(role(roleName, ns, tenant, rules), binding(bindingName, roleName, ns, tenant, operator));
  }
  apply.push(
    {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: meta(n.resourceQuota, ns, tenant),
      spec: structuredClone(tenant.spec.quota ?? DEFAULT_QUOTA),
    },
    {
      apiVersion: "v1",
      kind: "LimitRange",
      metadata: meta(n.limitRange, ns, tenant),
      spec: structuredClone(tenant.spec.limitRange ?? DEFAULT_LIMIT_RANGE),
    },
  );
  return {
    namespace: ns,
    ...(input.podSecurityLabels === "external" ? {} : { namespaceLabels: { ...POD_SECURITY_LABELS } }),
    apply,
    remove,
  };
}

/**
 * Offboarding, in upstream's order: nothing while an OpenBaoCluster remains in the namespace (its
 * operator access must outlive it), then the Secret Roles and the tenant Role, each binding first.
 * The quota, the limit range and the Pod Security labels stay.
 */
export function planOffboarding(clustersInNamespace: number): { waitFor: number } | { remove: RoleRef[] } {
  if (clustersInNamespace > 0) return { waitFor: clustersInNamespace };
  const n = TenantObjectNames;
  return {
    remove: [
      { kind: "RoleBinding", name: n.secretsWriterRoleBinding },
      { kind: "Role", name: n.secretsWriterRole },
      { kind: "RoleBinding", name: n.secretsReaderRoleBinding },
      { kind: "Role", name: n.secretsReaderRole },
      { kind: "RoleBinding", name: n.roleBinding },
      { kind: "Role", name: n.role },
    ],
  };
}
