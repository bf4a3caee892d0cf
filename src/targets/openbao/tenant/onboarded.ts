/**
 * What the openbao target makes of the OpenBaoTenants it sees: which namespaces are onboarded (a
 * provisioned tenant names them, and the guard lets it), which namespaces it therefore watches, and
 * why a cluster in a namespace none onboards waits. Pure: the wiring feeds it the tenants cached.
 */
import type { OpenBaoTenant } from "../../../apis/openbaotenant.js";
import { type DeniedNamespaces, refuseTarget } from "./guard.js";

/**
 * Which namespace each tenant onboards, by tenant key (`namespace/name`): a provisioned tenant's
 * target namespace, kept (from `before`) while a later pass of the same tenant fails, since its
 * Roles stay in place; a namespace is given up only when its tenant is gone (offboarded), names
 * another namespace, or is refused. A tenant being deleted stays counted while it is still there:
 * offboarding waits for the clusters in its namespace, which must be reconciled until they go.
 */
export function onboardedBy(
  tenants: Iterable<OpenBaoTenant>,
  operatorNamespace: string,
  before: ReadonlyMap<string, string> = new Map(),
  denied?: DeniedNamespaces,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of tenants) {
    const key = `${t.metadata.namespace}/${t.metadata.name}`;
    const target = t.spec?.targetNamespace;
    if (!target) continue;
    // Status alone is not trusted with access: the provisioner's own rule is asked again.
    if (refuseTarget(t.metadata.namespace ?? "", target, operatorNamespace, denied)) continue;
    if (t.status?.provisioned === true || before.get(key) === target) out.set(key, target);
  }
  return out;
}

/** The namespaces provisioned tenants onboard (see onboardedBy). */
export function onboardedNamespaces(
  tenants: Iterable<OpenBaoTenant>,
  operatorNamespace: string,
  before?: ReadonlyMap<string, string>,
  denied?: DeniedNamespaces,
): Set<string> {
  return new Set(onboardedBy(tenants, operatorNamespace, before, denied).values());
}

/**
 * The namespaces the target watches: the configured ones plus the onboarded ones. Undefined (every
 * namespace) stays undefined: a cluster-wide target has nothing to add.
 */
export function watchedNamespaces(
  configured: readonly string[] | undefined,
  onboarded: ReadonlySet<string>,
): string[] | undefined {
  if (!configured) return undefined;
  return [...new Set([...configured, ...onboarded])].sort();
}

/**
 * Why a cluster in `namespace` may not be reconciled yet, or undefined when it may. The configured
 * namespaces are granted by the chart and never wait; with no list (every namespace), each needs
 * its tenant, as upstream's multi-tenant mode.
 */
export function tenantMissing(
  namespace: string,
  tenants: readonly OpenBaoTenant[],
  configured: readonly string[] | undefined,
  operatorNamespace: string,
  before?: ReadonlyMap<string, string>,
  denied?: DeniedNamespaces,
): string | undefined {
  if (configured?.includes(namespace)) return undefined;
  if (onboardedNamespaces(tenants, operatorNamespace, before, denied).has(namespace)) return undefined;
  const naming = tenants.filter((t) => t.spec?.targetNamespace === namespace);
  const pending = naming.map((t) => {
    const why =
      t.status?.lastError ??
      t.status?.conditions?.find((c) => c.type === "Provisioned")?.message ??
      "not provisioned yet";
    return `OpenBaoTenant ${t.metadata.namespace}/${t.metadata.name} names it but is not provisioned (${why})`;
  });
  return pending.length > 0
    ? `namespace ${namespace} is not onboarded: ${pending.join("; ")}`
    : `namespace ${namespace} is not onboarded: no OpenBaoTenant names it; create one in namespace ${operatorNamespace} (or in ${namespace} itself) with spec.targetNamespace: ${namespace}`;
}
