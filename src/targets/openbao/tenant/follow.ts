/**
 * Tenant mode in the openbao target: the OpenBaoTenants it sees (of the operator's namespace, which
 * may onboard any namespace, and of its own namespaces, self-service), the namespaces it watches
 * following them at run time, and the answer to "may a cluster in this namespace be reconciled?".
 * The runtime only offers setNamespaces; which namespaces, and when, is decided here.
 */
import type { OpenBaoTenant } from "../../../apis/openbaotenant.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import { objectKey } from "../../../runtime/types.js";
import type { DeniedNamespaces } from "./guard.js";
import { onboardedBy, tenantMissing, watchedNamespaces } from "./onboarded.js";
import { OPENBAOTENANT } from "./types.js";

export interface Tenancy {
  readonly operatorNamespace: string;
  /** The tenant informers: the operator's namespace, and the target's own namespaces. */
  readonly informers: readonly Informer<OpenBaoTenant>[];
  /** Every tenant cached, once each. */
  tenants(): OpenBaoTenant[];
  /** Why a cluster in `namespace` waits, or undefined when it may be reconciled. */
  missing(namespace: string): string | undefined;
}

export function followTenants(
  manager: Manager,
  operatorNamespace: string,
  denied?: DeniedNamespaces,
): Tenancy {
  // The list the target was started with: what the chart granted; tenants add to it, never remove.
  const configured = manager.namespaces;
  const informers = [
    manager.informer<OpenBaoTenant>(OPENBAOTENANT, { fixedNamespaces: [operatorNamespace] }),
    manager.informer<OpenBaoTenant>(OPENBAOTENANT),
  ];
  const tenants = (): OpenBaoTenant[] => {
    const byKey = new Map<string, OpenBaoTenant>();
    for (const inf of informers) for (const t of inf.list()) byKey.set(objectKey(t), t);
    return [...byKey.values()];
  };
  // Which namespace each tenant onboarded: a failing later pass of a provisioned tenant keeps it.
  let onboarded = new Map<string, string>();
  let scheduled = false;
  const follow = () => {
    scheduled = false;
    onboarded = onboardedBy(tenants(), operatorNamespace, onboarded, denied);
    const next = watchedNamespaces(configured, new Set(onboarded.values()));
    const now = manager.namespaces;
    // Only for a target with a namespace list; one watching every namespace has nothing to add.
    if (!next || !now || (next.length === now.length && next.every((n, i) => n === now[i]))) return;
    manager.setNamespaces(next);
  };
  // Coalesced, and never inside an informer's own handler: setNamespaces changes that informer too.
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(follow);
  };
  for (const inf of informers) inf.addHandler({ add: schedule, update: schedule, delete: schedule });
  return {
    operatorNamespace,
    informers,
    tenants,
    missing: (namespace) =>
      tenantMissing(namespace, tenants(), configured, operatorNamespace, onboarded, denied),
  };
}
