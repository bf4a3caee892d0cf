/**
 * Gathers what the readiness conditions are decided from, through the manager's reader: Secrets,
 * the cluster's claims and StatefulSets, the API server's Service and EndpointSlices, and with
 * spec.gateway its Gateway, GatewayClass and the cluster's own Route are all watched (target.ts), so
 * a quiet pass reads them from the caches and sends nothing. A user's ExistingPVC claim (no cluster
 * label) and a Gateway outside the watched namespaces are the exceptions: they are read live.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import {
  ENDPOINT_SLICE,
  PERSISTENT_VOLUME_CLAIM,
  SECRET,
  SERVICE,
  STATEFULSET,
} from "../../../runtime/builtin-types.js";
import type { CachedReader } from "../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../runtime/client.js";
import { isForbidden, isNotFound } from "../../../runtime/errors.js";
import type { ResourceType } from "../../../runtime/types.js";
import { LABEL_CLUSTER } from "../identity.js";
import { sharedClaims } from "../workload/statefulsets/shared-claims.js";
import { backupSecretNames } from "./backup.js";
import { unsealSecretName } from "./cloud-unseal.js";
import type { GatewayFacts, Lookup, ReadinessFacts } from "./facts.js";
import { GATEWAY_GROUP, gatewayRefOf, routeOf } from "./gateway.js";

/** Gateway API kinds and the versions tried, newest first (the target watches the same). */
export const GATEWAY_KINDS = {
  Gateway: ["v1", "v1beta1"],
  GatewayClass: ["v1", "v1beta1"],
  HTTPRoute: ["v1", "v1beta1"],
  TLSRoute: ["v1alpha3", "v1alpha2"],
} as const;

type Reader = Pick<CachedReader, "get" | "list">;

export interface ReadinessReadOptions {
  /** false: the operator runs without the Gateway API (no RBAC for it). */
  gatewayAPI?: false;
}

async function look(read: () => Promise<unknown>): Promise<Lookup> {
  try {
    const o = await read();
    return (o as Lookup | undefined) ?? "missing";
  } catch (e) {
    if (isNotFound(e)) return "missing";
    if (isForbidden(e)) return "forbidden";
    throw e;
  }
}

/** The Secrets the readiness conditions read: a change to one is news for the cluster. */
export function readinessSecretNames(c: OpenBaoCluster): string[] {
  const unseal = unsealSecretName(c);
  return [...new Set([...(c.spec?.backup ? backupSecretNames(c) : []), ...(unseal ? [unseal] : [])])];
}

export async function observeReadiness(
  reader: Reader,
  client: Pick<KubeClient, "resources">,
  c: OpenBaoCluster,
  opts: ReadinessReadOptions = {},
): Promise<ReadinessFacts> {
  const ns = c.metadata.namespace!;
  const name = c.metadata.name!;
  const own = { labels: { [LABEL_CLUSTER]: name } };
  const secrets = new Map<string, Lookup>();
  for (const s of readinessSecretNames(c)) secrets.set(s, await look(() => reader.get(SECRET, s, ns)));
  const claims = new Map<string, Lookup>();
  for (const s of sharedClaims(c))
    if (s.claimName && !claims.has(s.claimName))
      claims.set(
        s.claimName,
        await look(() => reader.get(PERSISTENT_VOLUME_CLAIM, s.claimName, ns, s.managed ? own : {})),
      );
  const statefulSets = c.spec.auditFileStorage
    ? await reader.list(STATEFULSET, { namespace: ns, labelSelector: `${LABEL_CLUSTER}=${name}` })
    : [];
  return {
    secrets,
    claims,
    statefulSets,
    apiServer: await apiServerAddresses(reader),
    ...(c.spec.gateway?.enabled ? { gateway: await gatewayFacts(reader, client, c, opts) } : {}),
  };
}

async function apiServerAddresses(reader: Reader): Promise<ReadinessFacts["apiServer"]> {
  const out = { serviceIPs: [] as string[], endpointIPs: [] as string[] };
  try {
    const svc = await reader.get(SERVICE, "kubernetes", "default");
    const spec = svc?.["spec"] as { clusterIPs?: string[]; clusterIP?: string } | undefined;
    out.serviceIPs = spec?.clusterIPs ?? (spec?.clusterIP ? [spec.clusterIP] : []);
    const slices = await reader.list(ENDPOINT_SLICE, {
      namespace: "default",
      labelSelector: "kubernetes.io/service-name=kubernetes",
    });
    for (const s of slices)
      for (const e of (s["endpoints"] ?? []) as { addresses?: string[] }[])
        out.endpointIPs.push(...(e.addresses ?? []));
  } catch (e) {
    if (!isForbidden(e) && !isNotFound(e)) throw e;
  }
  return out;
}

async function servedType(
  client: Pick<KubeClient, "resources">,
  kind: keyof typeof GATEWAY_KINDS,
  opts: ReadinessReadOptions,
): Promise<ResourceType | undefined> {
  if (opts.gatewayAPI === false) return undefined;
  for (const v of GATEWAY_KINDS[kind]) {
    const t = await client.resources.find(`${GATEWAY_GROUP}/${v}`, kind);
    if (t) return t;
  }
  return undefined;
}

async function gatewayFacts(
  reader: Reader,
  client: Pick<KubeClient, "resources">,
  c: OpenBaoCluster,
  opts: ReadinessReadOptions,
): Promise<GatewayFacts> {
  const ref = gatewayRefOf(c);
  const route = routeOf(c);
  const routeType = await servedType(client, route.kind, opts);
  const routeLookup: Lookup = routeType
    ? await look(() =>
        reader.get(routeType, route.name, c.metadata.namespace, {
          labels: { [LABEL_CLUSTER]: c.metadata.name! },
        }),
      )
    : "not-served";
  const gatewayType = await servedType(client, "Gateway", opts);
  if (!gatewayType) return { gateway: "not-served", route: routeLookup };
  if (!ref.name) return { gateway: "missing", route: routeLookup };
  const gateway = await look(() => reader.get(gatewayType, ref.name, ref.namespace));
  const className =
    typeof gateway === "object"
      ? String((gateway["spec"] as { gatewayClassName?: string } | undefined)?.gatewayClassName ?? "").trim()
      : "";
  if (!className) return { gateway, route: routeLookup };
  const classType = await servedType(client, "GatewayClass", opts);
  const gatewayClass: Lookup = classType ? await look(() => reader.get(classType, className)) : "not-served";
  return { gateway, gatewayClass, route: routeLookup };
}
