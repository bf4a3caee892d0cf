/**
 * The tenant provisioner's controller, set up only when `tenants.enabled` is on. It watches the
 * OpenBaoTenants of the operator's namespace (which may onboard any namespace) and of the target's
 * own namespaces (self-service: their own namespace only). A provisioned tenant is looked at again
 * at the resync interval, so the Secret allow-lists follow clusters created there. The target's
 * watched namespaces follow the tenants in ./follow.ts, which owns the informers shared here.
 */

import type { OpenBaoTenant } from "../../../apis/openbaotenant.js";
import { OpenBaoTenantManagers } from "../../../apis/openbaotenant-names.js";
import {
  LIMIT_RANGE,
  NAMESPACE,
  RESOURCE_QUOTA,
  ROLE,
  ROLE_BINDING,
} from "../../../runtime/builtin-types.js";
import { Controller, done, requeueAfter } from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import { eitherCache } from "../../../runtime/status.js";
import type { OpenBaoTargetConfig } from "../config.js";
import type { Tenancy } from "./follow.js";
import { TENANT_SELECTOR } from "./plan.js";
import { TenantProvisioner, type TenantProvisionerDeps } from "./provisioner.js";

export const TENANT_CONTROLLER_NAME = OpenBaoTenantManagers.controller;

/** How often a settled tenant is looked at again, whatever the clusters' resync (see below). */
export const TENANT_RESYNC_MS = 60_000;

/** What the configuration decides of a provisioner's pass: who owns the labels, which namespaces are denied. */
export function tenantPolicy(
  config: Pick<OpenBaoTargetConfig, "tenants">,
): Pick<TenantProvisionerDeps, "podSecurityLabels" | "denied"> {
  return {
    podSecurityLabels: config.tenants?.namespacePodSecurityLabels ?? "enforce",
    ...(config.tenants?.denied ? { denied: config.tenants.denied } : {}),
  };
}

export function setupTenants(
  manager: Manager,
  config: OpenBaoTargetConfig,
  tenancy: Tenancy,
  serviceAccount: string,
): void {
  const [inOperatorNamespace, selfService] = tenancy.informers as [
    Informer<OpenBaoTenant>,
    Informer<OpenBaoTenant>,
  ];
  // What a pass reads, cached: its own objects with managedFields (an unchanged one is not written)
  // in the namespaces the target watches (the onboarded ones among them), and the namespaces, for
  // their Pod Security labels (optional: without the right to watch them, that read stays live).
  const own = { labelSelector: TENANT_SELECTOR, keepManagedFields: true };
  for (const type of [ROLE, ROLE_BINDING, RESOURCE_QUOTA, LIMIT_RANGE]) manager.informer(type, own);
  manager.informer(NAMESPACE, { keepManagedFields: true, optional: true });
  const provisioner = new TenantProvisioner({
    client: manager.client,
    reader: manager.reader,
    cache: eitherCache(inOperatorNamespace, selfService),
    ...(config.tenants?.clusterSelector ? { clusterSelector: config.tenants.clusterSelector } : {}),
    events: manager.events,
    operator: { namespace: tenancy.operatorNamespace, serviceAccount },
    ...tenantPolicy(config),
  });
  const controller = new Controller({
    name: TENANT_CONTROLLER_NAME,
    log: manager.log,
    concurrency: Math.min(config.concurrency, 3),
    reconcile: async (key, ctx) => {
      const tenant = inOperatorNamespace.get(key) ?? selfService.get(key);
      if (!tenant) {
        provisioner.forget(key);
        return done();
      }
      const result = await provisioner.reconcile(tenant, ctx.signal);
      // Settled: look again at the resync interval (new clusters, Roles edited or deleted by hand),
      // but at least every minute: a tenant's objects carry no owner reference that would wake it,
      // unlike a cluster's children, so the clusters' longer backstop would slow their repair.
      return result === undefined && !tenant.metadata.deletionTimestamp
        ? requeueAfter(Math.min(config.resyncMs, TENANT_RESYNC_MS))
        : result;
    },
  });
  controller.watchPrimary(inOperatorNamespace);
  controller.watchPrimary(selfService);
  manager.add(controller);
}
