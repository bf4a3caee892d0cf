import { OpenBaoClusterReason as R } from "../../../../apis/openbaocluster-names.js";
import { ENDPOINT_SLICE, SERVICE } from "../../../../runtime/builtin-types.js";
import { errorMessage, isForbidden, isNotFound } from "../../../../runtime/errors.js";
import type { KubeObject, ResourceType } from "../../../../runtime/types.js";
import { type ClusterRef, clusterNames, legacyNames } from "../../identity.js";
import { metricsSettingsOrNone } from "../config/metrics.js";
import { applyOwned, deleteIfOwned, type ServiceContext, type ServiceOutcome } from "../service-context.js";
import { type IngressClassLookup, ingressReadiness } from "./ingress-readiness.js";
import {
  metricsService,
  SERVICE_MONITOR_API_VERSION,
  SERVICE_MONITOR_KIND,
  serviceMonitor,
} from "./metrics.js";
import {
  acmeService,
  activeService,
  clientService,
  gatewayObjects,
  headlessServices,
  ingress,
  type NetworkCluster,
  type NetworkInputs,
  networkRef,
  readService,
} from "./plan.js";
import { apiServerEgress, jobsNetworkPolicy, networkPolicy } from "./policies.js";

export const NetworkReason = {
  Ready: R.Ready,
  GatewayAPIMissing: R.GatewayAPIMissing,
  NetworkEgressRulesRequired: R.NetworkEgressRulesRequired,
} as const;

export const GATEWAY_GROUP = "gateway.networking.k8s.io";
/**
 * The Gateway API kinds a cluster's routes use, versions tried newest first: BackendTLSPolicy
 * reached v1 late, TLSRoute is still alpha. The target watches the same versions (target.ts), so
 * a cached route is in the version the pass writes.
 */
export const GATEWAY_VERSIONS = {
  httpRoute: { kind: "HTTPRoute", versions: ["v1", "v1beta1"] },
  tlsRoute: { kind: "TLSRoute", versions: ["v1alpha3", "v1alpha2"] },
  backendTLSPolicy: { kind: "BackendTLSPolicy", versions: ["v1", "v1alpha3"] },
} as const;

export interface NetworkOptions {
  operatorNamespace?: string;
  /** The CA bundle clients verify OpenBao with (from the certificate service); none for ACME. */
  backendCaPem?: string;
  /** false: the operator runs without the Gateway API (no RBAC for it), served or not. */
  gatewayAPI?: false;
}

/**
 * The networking service: Services, Ingress or Gateway API routes with their backend trust, and
 * the NetworkPolicy. Each object is written only when it differs; optional objects that are no
 * longer asked for are deleted when this cluster controls them.
 */
export async function reconcileNetwork(
  ctx: ServiceContext,
  cluster: NetworkCluster,
  opts: NetworkOptions = {},
): Promise<ServiceOutcome> {
  const ref = networkRef(cluster);
  const withoutGatewayAPI = opts.gatewayAPI === false;
  const gatewayApi = cluster.spec.gateway?.enabled && !withoutGatewayAPI ? await servedGatewayKinds(ctx) : {};
  const apiServer = apiServerEgress(cluster, await observeApiServer(ctx));
  const inputs: NetworkInputs = {
    apiServer,
    gatewayApi,
    ...(opts.operatorNamespace ? { operatorNamespace: opts.operatorNamespace } : {}),
    ...(opts.backendCaPem ? { backendCaPem: opts.backendCaPem } : {}),
  };
  const gw = gatewayObjects(cluster, inputs);
  const metrics = metricsSettingsOrNone(cluster);
  const monitorServed =
    (await ctx.client.resources.find(SERVICE_MONITOR_API_VERSION, SERVICE_MONITOR_KIND)) !== undefined;
  const optional = [
    readService(cluster),
    acmeService(cluster),
    ingress(cluster),
    metrics ? metricsService(ref, metrics) : undefined,
    // Upstream's rule: written where the Prometheus Operator's CRD is served, silently left out elsewhere.
    metrics && monitorServed ? serviceMonitor(ref, metrics, cluster.spec.tls?.enabled !== false) : undefined,
  ].filter((o): o is KubeObject => o !== undefined);
  const desired = [
    ...headlessServices(cluster),
    clientService(cluster),
    activeService(cluster),
    ...optional,
    ...gw.objects,
    networkPolicy(cluster, inputs),
    jobsNetworkPolicy(cluster, inputs),
  ];
  const changes: string[] = [];
  // Before the names followed upstream, `<name>` was the ClusterIP client Service; a Service's
  // clusterIP cannot change, so that one goes before the headless `<name>` takes its name.
  await deleteIfOwned(
    ctx,
    { apiVersion: "v1", kind: "Service", name: legacyNames(ref).clientService, namespace: ref.namespace },
    changes,
    (live) => (live["spec"] as { clusterIP?: string } | undefined)?.clusterIP !== "None",
  );
  let liveIngress: KubeObject | undefined;
  for (const obj of desired) {
    const written = await applyOwned(ctx, obj, changes);
    if (obj.kind === "Ingress") liveIngress = written;
  }
  await removeUnwanted(
    ctx,
    ref.namespace,
    desired,
    withoutGatewayAPI ? undefined : gatewayApi,
    ref,
    changes,
    monitorServed,
  );

  // Routes that cannot be served are a concern of their own: the Services, the NetworkPolicy and so
  // the pods do not wait for a Gateway API that may never be installed.
  let gateway: ServiceOutcome["gateway"];
  if (gw.missing.length > 0) {
    const message = withoutGatewayAPI
      ? `spec.gateway asks for ${gw.missing.join(", ")}, but this operator runs without the Gateway API (targets.openbao gatewayAPI: false, the chart's gatewayAPI.enabled); the cluster runs without its Gateway routes`
      : `spec.gateway asks for ${gw.missing.join(", ")}, which this cluster does not serve (${GATEWAY_GROUP} CRDs missing); the cluster runs without its Gateway routes`;
    ctx.events.record(ctx.owner, {
      type: "Warning",
      reason: NetworkReason.GatewayAPIMissing,
      action: "Reconcile",
      note: message,
    });
    gateway = { ready: false, reason: NetworkReason.GatewayAPIMissing, message };
  } else if (cluster.spec.gateway?.enabled)
    gateway = {
      ready: true,
      reason: NetworkReason.Ready,
      message: `${gw.objects.length} Gateway API objects are current`,
    };
  const ingressOutcome = cluster.spec.ingress?.enabled
    ? ingressReadiness({
        live: liveIngress,
        className: cluster.spec.ingress.className,
        classLookup: await lookUpIngressClass(ctx, cluster.spec.ingress.className),
        readinessMode: cluster.spec.ingress.readinessMode,
      })
    : undefined;
  if (apiServer.cidrs.length === 0) {
    const message =
      "the Kubernetes API server's address could not be found; set spec.network.apiServerCIDR or spec.network.apiServerEndpointIPs";
    ctx.events.record(ctx.owner, {
      type: "Warning",
      reason: NetworkReason.NetworkEgressRulesRequired,
      action: "Reconcile",
      note: message,
    });
    return {
      ready: false,
      reason: NetworkReason.NetworkEgressRulesRequired,
      message,
      changes,
      ...(gateway ? { gateway } : {}),
      ...(ingressOutcome ? { ingress: ingressOutcome } : {}),
    };
  }
  return {
    ready: true,
    reason: NetworkReason.Ready,
    message: `${desired.length} networking objects are current`,
    changes,
    ...(gateway ? { gateway } : {}),
    ...(ingressOutcome ? { ingress: ingressOutcome } : {}),
  };
}

const INGRESS_CLASS: ResourceType = {
  group: "networking.k8s.io",
  version: "v1",
  kind: "IngressClass",
  plural: "ingressclasses",
  namespaced: false,
};

/** Whether spec.ingress.className names an IngressClass; a namespace-scoped operator may not look. */
async function lookUpIngressClass(
  ctx: ServiceContext,
  className: string | undefined,
): Promise<IngressClassLookup> {
  if (!className) return "not-named";
  try {
    return (await ctx.reader.get(INGRESS_CLASS, className)) ? "found" : "missing";
  } catch (e) {
    if (isNotFound(e)) return "missing";
    if (isForbidden(e)) return "forbidden";
    throw e;
  }
}

async function servedGatewayKinds(ctx: ServiceContext): Promise<NetworkInputs["gatewayApi"]> {
  const out: NetworkInputs["gatewayApi"] = {};
  for (const [key, { kind, versions }] of Object.entries(GATEWAY_VERSIONS)) {
    for (const v of versions) {
      const apiVersion = `${GATEWAY_GROUP}/${v}`;
      if (await ctx.client.resources.find(apiVersion, kind)) {
        out[key as keyof typeof out] = apiVersion;
        break;
      }
    }
  }
  return out;
}

/**
 * The `kubernetes` Service and its endpoints, for the API-server egress rule. A namespace-scoped
 * operator may not read them: then the spec's addresses are needed, which the outcome says.
 */
async function observeApiServer(ctx: ServiceContext) {
  const observed = { serviceIPs: [] as string[], endpointIPs: [] as string[], ports: [] as number[] };
  try {
    const svc = await ctx.reader.get(SERVICE, "kubernetes", "default");
    const spec = svc?.["spec"] as { clusterIPs?: string[]; clusterIP?: string } | undefined;
    observed.serviceIPs = spec?.clusterIPs ?? (spec?.clusterIP ? [spec.clusterIP] : []);
    const slices = await ctx.reader.list(ENDPOINT_SLICE, {
      namespace: "default",
      labelSelector: "kubernetes.io/service-name=kubernetes",
    });
    for (const s of slices) {
      const endpoints = (s["endpoints"] ?? []) as { addresses?: string[] }[];
      for (const e of endpoints) observed.endpointIPs.push(...(e.addresses ?? []));
      for (const p of (s["ports"] ?? []) as { port?: number }[])
        if (typeof p.port === "number") observed.ports.push(p.port);
    }
  } catch (e) {
    if (!isForbidden(e) && !isNotFound(e)) throw e;
    ctx.log.debug({ err: errorMessage(e) }, "cannot read the kubernetes Service; using spec.network only");
  }
  return observed;
}

/**
 * Objects this cluster made and no longer wants: optional ones no longer asked for (read and ACME
 * Services, Ingress, routes, backend trust), those under the names from before they followed
 * upstream, and upstream's stale per-colour client Services.
 */
async function removeUnwanted(
  ctx: ServiceContext,
  namespace: string,
  desired: KubeObject[],
  /** undefined: the Gateway API is off for this operator, so no route is looked for. */
  gatewayApi: NetworkInputs["gatewayApi"] | undefined,
  ref: ClusterRef,
  changes: string[],
  monitorServed: boolean,
): Promise<void> {
  const names = clusterNames(ref);
  const legacy = legacyNames(ref);
  const wanted = new Set(desired.map((o) => `${o.kind}/${o.metadata.name}`));
  const candidates: { apiVersion: string; kind: string; name: string }[] = [
    { apiVersion: "v1", kind: "Service", name: names.readService },
    { apiVersion: "v1", kind: "Service", name: names.acmeService },
    { apiVersion: "v1", kind: "Service", name: names.metricsService },
    ...(monitorServed
      ? [{ apiVersion: SERVICE_MONITOR_API_VERSION, kind: SERVICE_MONITOR_KIND, name: names.serviceMonitor }]
      : []),
    { apiVersion: "v1", kind: "Service", name: legacy.headlessService },
    { apiVersion: "v1", kind: "Service", name: legacy.blueClientService },
    { apiVersion: "v1", kind: "Service", name: legacy.greenClientService },
    { apiVersion: "networking.k8s.io/v1", kind: "Ingress", name: names.ingress },
    { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", name: legacy.networkPolicy },
    { apiVersion: "v1", kind: "ConfigMap", name: names.backendCaConfigMap },
    { apiVersion: "v1", kind: "ConfigMap", name: legacy.backendCaConfigMap },
  ];
  // Without a gateway setting the kinds were not looked up; look now, so a route left from before goes.
  const served =
    gatewayApi === undefined
      ? {}
      : Object.keys(gatewayApi).length > 0
        ? gatewayApi
        : await servedGatewayKinds(ctx);
  const routes = [
    [served.httpRoute, "HTTPRoute", [names.httpRoute, legacy.httpRoute]],
    [served.tlsRoute, "TLSRoute", [names.tlsRoute, legacy.tlsRoute]],
    [served.backendTLSPolicy, "BackendTLSPolicy", [names.backendTLSPolicy, legacy.backendTLSPolicy]],
  ] as const;
  for (const [apiVersion, kind, routeNames] of routes)
    if (apiVersion) for (const name of routeNames) candidates.push({ apiVersion, kind, name });
  for (const c of candidates) {
    if (wanted.has(`${c.kind}/${c.name}`)) continue;
    await deleteIfOwned(ctx, { ...c, namespace }, changes);
  }
}
