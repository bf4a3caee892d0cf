/**
 * Which namespace a tenant may onboard. Upstream's rule: a tenant in the operator's namespace may
 * name any namespace, any other only its own (else SecurityViolation). Upstream's chart adds an
 * admission policy that refuses the provisioner's RBAC writes in the release's namespace and in
 * "system" namespaces (admissionPolicies.provisionerRBAC.deniedNamespaces / deniedNamespacePrefixes);
 * here the provisioner itself asks the same list before it touches anything, so the refusal is the
 * tenant's status rather than a failed write, with or without the chart's admission policies.
 * Kubernetes' own namespaces (`kube-`) stay refused whatever the list says. Pure.
 */
import { OpenBaoTenantReason } from "../../../apis/openbaotenant-names.js";
import { DEFAULT_DENIED_NAMESPACES, type DeniedNamespaces } from "../config.js";

export { DEFAULT_DENIED_NAMESPACES, type DeniedNamespaces };

/** Kubernetes' own namespaces: refused even when the configured lists leave them out. */
const KUBERNETES_PREFIX = "kube-";

/** Upstream's words for this refusal (its admission policy's message), kept so users find it. */
export const SYSTEM_NAMESPACE_REFUSAL = "the provisioner may not manage tenant RBAC in system namespaces";

export interface TenantRefusal {
  reason: typeof OpenBaoTenantReason.SecurityViolation | typeof OpenBaoTenantReason.NamespaceNotAllowed;
  message: string;
}

/** Which entry of the deny list matches `namespace` ("name x" / "prefix y-"), or undefined. */
export function deniedBy(
  namespace: string,
  denied: DeniedNamespaces = DEFAULT_DENIED_NAMESPACES,
): string | undefined {
  if (denied.names.includes(namespace)) return `denied namespace "${namespace}"`;
  const prefix = [KUBERNETES_PREFIX, ...denied.prefixes].find((p) => namespace.startsWith(p));
  return prefix === undefined ? undefined : `denied prefix "${prefix}"`;
}

/** Why the tenant in `tenantNamespace` may not onboard `target`, or undefined when it may. */
export function refuseTarget(
  tenantNamespace: string,
  target: string,
  operatorNamespace: string,
  denied: DeniedNamespaces = DEFAULT_DENIED_NAMESPACES,
): TenantRefusal | undefined {
  if (tenantNamespace !== operatorNamespace && target !== tenantNamespace)
    return {
      reason: OpenBaoTenantReason.SecurityViolation,
      message: `security violation: an OpenBaoTenant in namespace "${tenantNamespace}" may onboard only "${tenantNamespace}", not "${target}"; create it in the operator's namespace "${operatorNamespace}" to onboard another namespace`,
    };
  if (target === operatorNamespace)
    return {
      reason: OpenBaoTenantReason.NamespaceNotAllowed,
      message: `namespace "${target}" is the operator's own and cannot be onboarded as a tenant: ${SYSTEM_NAMESPACE_REFUSAL}`,
    };
  const rule = deniedBy(target, denied);
  if (rule)
    return {
      reason: OpenBaoTenantReason.NamespaceNotAllowed,
      message: `namespace "${target}" is a system namespace (${rule}) and cannot be onboarded as a tenant: ${SYSTEM_NAMESPACE_REFUSAL} (tenants.deniedNamespaces, tenants.deniedNamespacePrefixes)`,
    };
  return undefined;
}
