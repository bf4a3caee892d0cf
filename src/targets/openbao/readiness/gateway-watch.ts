/**
 * Which OpenBaoClusters a Gateway API object concerns, for GatewayIntegrationReady: a settled
 * cluster is passed again only on an event or its long resync, so the Gateway it refers to, that
 * Gateway's class, and its own Route turning Accepted or losing a reference must wake it. Pure over
 * the informers' caches; the wiring (target.ts) calls these only for kinds discovery says are served.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeObject } from "../../../runtime/types.js";
import { objectKey } from "../../../runtime/types.js";
import { gatewayRefOf } from "./gateway.js";

const usesGateway = (c: OpenBaoCluster) => c.spec?.gateway?.enabled === true;

/** The clusters whose spec.gateway.gatewayRef names this Gateway. */
export function clustersOfGateway(clusters: readonly OpenBaoCluster[], gateway: KubeObject): string[] {
  const { name, namespace } = gateway.metadata;
  return clusters
    .filter((c) => {
      if (!usesGateway(c)) return false;
      const ref = gatewayRefOf(c);
      return ref.name === name && ref.namespace === namespace;
    })
    .map(objectKey);
}

/**
 * The clusters whose Gateway names this class. A cluster whose Gateway is not in the cache (not
 * created yet, or in a namespace the target does not watch) is woken too: classes change seldom,
 * and a pass that finds nothing new sends nothing.
 */
export function clustersOfGatewayClass(
  clusters: readonly OpenBaoCluster[],
  gatewayOf: (namespace: string, name: string) => KubeObject | undefined,
  gatewayClass: KubeObject,
): string[] {
  return clusters
    .filter((c) => {
      if (!usesGateway(c)) return false;
      const ref = gatewayRefOf(c);
      const gw = ref.name ? gatewayOf(ref.namespace, ref.name) : undefined;
      if (!gw) return true;
      const cls = (gw["spec"] as { gatewayClassName?: string } | undefined)?.gatewayClassName?.trim();
      return cls === gatewayClass.metadata.name;
    })
    .map(objectKey);
}

/** Every cluster that asks for a Gateway: a Gateway API kind was just found served. */
export function clustersUsingGateways(clusters: readonly OpenBaoCluster[]): string[] {
  return clusters.filter(usesGateway).map(objectKey);
}
