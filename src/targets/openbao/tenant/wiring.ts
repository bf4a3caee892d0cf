/**
 * The tenant provisioner's controller, set up only when `tenants.enabled` is on. It watches the
 * OpenBaoTenants of the operator's namespace (which may onboard any namespace) and of the target's
 * own namespaces (self-service: their own namespace only). A provisioned tenant is looked at again
 * at the resync interval, so the Secret allow-lists follow clusters created in a namespace this
 * process does not watch yet; watching tenant namespaces at run time is the runtime's next step.
 */

import type { OpenBaoTenant } from "../../../apis/openbaotenant.js";
import { OpenBaoTenantManagers } from "../../../apis/openbaotenant-names.js";
import { Controller, done, requeueAfter } from "../../../runtime/controller.js";
import type { Manager } from "../../../runtime/manager.js";
import type { OpenBaoTargetConfig } from "../config.js";
import { OPENBAOTENANT, TenantProvisioner } from "./provisioner.js";

export const TENANT_CONTROLLER_NAME = OpenBaoTenantManagers.controller;

export function setupTenants(
  manager: Manager,
  config: OpenBaoTargetConfig,
  tenants: { serviceAccount: string; operatorNamespace: string },
): void {
  const inOperatorNamespace = manager.informer<OpenBaoTenant>(OPENBAOTENANT, {
    fixedNamespaces: [tenants.operatorNamespace],
  });
  const selfService = manager.informer<OpenBaoTenant>(OPENBAOTENANT);
  const provisioner = new TenantProvisioner({
    client: manager.client,
    events: manager.events,
    operator: { namespace: tenants.operatorNamespace, serviceAccount: tenants.serviceAccount },
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
      // Settled: look again at the resync interval (new clusters, Roles edited or deleted by hand).
      return result === undefined && !tenant.metadata.deletionTimestamp
        ? requeueAfter(config.resyncMs)
        : result;
    },
  });
  controller.watchPrimary(inOperatorNamespace);
  controller.watchPrimary(selfService);
  manager.add(controller);
}
