/**
 * Which namespace a tenant may onboard. Upstream's rule: a tenant in the operator's namespace may
 * name any namespace, any other only its own (else SecurityViolation). Upstream stops there; here
 * Kubernetes' own namespaces and the operator's are never handed out, since the provisioner would
 * otherwise grant the openbao process Roles there and relabel them for Pod Security. Pure.
 */
import { OpenBaoTenantReason } from "../../../apis/openbaotenant-names.js";

/** Kubernetes' initial namespaces; anything under the `kube-` prefix is treated the same. */
export const SYSTEM_NAMESPACES: readonly string[] = [
  "default",
  "kube-system",
  "kube-public",
  "kube-node-lease",
];

export interface TenantRefusal {
  reason: typeof OpenBaoTenantReason.SecurityViolation | typeof OpenBaoTenantReason.NamespaceNotAllowed;
  message: string;
}

export function isSystemNamespace(namespace: string): boolean {
  return SYSTEM_NAMESPACES.includes(namespace) || namespace.startsWith("kube-");
}

/** Why the tenant in `tenantNamespace` may not onboard `target`, or undefined when it may. */
export function refuseTarget(
  tenantNamespace: string,
  target: string,
  operatorNamespace: string,
): TenantRefusal | undefined {
  if (tenantNamespace !== operatorNamespace && target !== tenantNamespace)
    return {
      reason: OpenBaoTenantReason.SecurityViolation,
      message: `security violation: an OpenBaoTenant in namespace "${tenantNamespace}" may onboard only "${tenantNamespace}", not "${target}"; create it in the operator's namespace "${operatorNamespace}" to onboard another namespace`,
    };
  if (target === operatorNamespace)
    return {
      reason: OpenBaoTenantReason.NamespaceNotAllowed,
      message: `namespace "${target}" is the operator's own and cannot be onboarded as a tenant`,
    };
  if (isSystemNamespace(target))
    return {
      reason: OpenBaoTenantReason.NamespaceNotAllowed,
      message: `namespace "${target}" is a Kubernetes system namespace and cannot be onboarded as a tenant`,
    };
  return undefined;
}
