/**
 * The Gateway API watches of the workload controller: the cluster's own Routes (and
 * BackendTLSPolicy) by owner, the Gateways and GatewayClasses it refers to by spec.gateway, each
 * informer started only while discovery says its kind is served. A kind found served, or no longer
 * served (its CRD deleted), wakes every cluster that asks for a Gateway: GatewayIntegrationReady
 * said GatewayAPIMissing until then, or must say it from then on. Everything read here is the
 * informers' memory: a wake costs no request.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { Controller } from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { GATEWAY_GROUP, GATEWAY_VERSIONS } from "../workload/network/reconcile.js";
import { clustersOfGateway, clustersOfGatewayClass, clustersUsingGateways } from "./gateway-watch.js";
import { GATEWAY_KINDS } from "./observe.js";

export function watchGatewayAPI(
  manager: Manager,
  controller: Controller,
  clusters: Informer<OpenBaoCluster>,
  owner: Pick<ResourceType, "group" | "kind" | "namespaced">,
  owned: { labelSelector: string; keepManagedFields: boolean },
): void {
  const wake = () => {
    for (const key of clustersUsingGateways(clusters.list())) controller.queue.add(key);
  };
  let gateways: Informer<KubeObject> | undefined;
  for (const { kind, versions } of Object.values(GATEWAY_VERSIONS))
    manager.informerWhenServed(
      { group: GATEWAY_GROUP, kind, versions },
      owned,
      (inf) => {
        controller.watchOwned(inf, owner);
        wake();
      },
      wake,
    );
  manager.informerWhenServed(
    { group: GATEWAY_GROUP, kind: "Gateway", versions: [...GATEWAY_KINDS.Gateway] },
    {},
    (inf) => {
      gateways = inf;
      controller.watchMapped(inf, (gw) => clustersOfGateway(clusters.list(), gw));
      wake();
    },
    () => {
      gateways = undefined;
      wake();
    },
  );
  manager.informerWhenServed(
    { group: GATEWAY_GROUP, kind: "GatewayClass", versions: [...GATEWAY_KINDS.GatewayClass] },
    {},
    (inf) => {
      const gatewayOf = (ns: string, name: string) => gateways?.get(`${ns}/${name}`);
      controller.watchMapped(inf, (cls) => clustersOfGatewayClass(clusters.list(), gatewayOf, cls));
      wake();
    },
    wake,
  );
}
