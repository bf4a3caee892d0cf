import type { OpenBaoCluster, OpenBaoClusterSpec } from "../../../../apis/openbaocluster.js";
import type { KubeObject } from "../../../../runtime/types.js";
import {
  API_PORT,
  CLUSTER_PORT,
  type ClusterRef,
  Component,
  clusterLabels,
  clusterNames,
  clusterRefOf,
  LABEL_CLUSTER,
  LABEL_INSTANCE,
  LABEL_OPENBAO_ACTIVE,
  podSelector,
} from "../../identity.js";
import { clientSelector } from "../statefulsets/bluegreen.js";

/**
 * The networking objects of one cluster, built from the spec alone: Services, Ingress and Gateway
 * routes here, NetworkPolicies in policies.ts. Pure: which Gateway API versions the server offers,
 * where the API server is and the CA bundle come in as inputs.
 */

export interface NetworkCluster {
  metadata: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec: Pick<
    OpenBaoClusterSpec,
    "service" | "ingress" | "gateway" | "network" | "readReplicas" | "tls" | "replicas" | "profile"
  > &
    Partial<Pick<OpenBaoClusterSpec, "observability" | "version">>;
  /** status.blueGreen moves the client Service to green once green can take over. */
  status?: Pick<NonNullable<OpenBaoCluster["status"]>, "blueGreen">;
}

export interface NetworkInputs {
  /** Namespace of the operator: its pods may reach the API port (init, health, raft operations). */
  operatorNamespace?: string;
  /** Where pods reach the Kubernetes API (service registration, Kubernetes auth): CIDRs and ports. */
  apiServer: { cidrs: string[]; ports: number[] };
  /** PEM bundle the Gateway verifies OpenBao with; none means the system roots (ACME). */
  backendCaPem?: string;
  /** The served apiVersion of each Gateway API kind, undefined when it is not served. */
  gatewayApi: { httpRoute?: string; tlsRoute?: string; backendTLSPolicy?: string };
}

export function networkRef(c: NetworkCluster): ClusterRef {
  if (!c.metadata.name || !c.metadata.namespace)
    throw new Error("metadata.name and metadata.namespace are required");
  return clusterRefOf(c.metadata);
}

/** Every OpenBao pod of the cluster, voters and read replicas: Raft peers of each other. */
export function peerSelector(ref: ClusterRef): Record<string, string> {
  return { [LABEL_INSTANCE]: ref.name, [LABEL_CLUSTER]: ref.name };
}

const tlsOn = (c: NetworkCluster): boolean => c.spec.tls?.enabled ?? true;

function apiPort(c: NetworkCluster) {
  return { name: tlsOn(c) ? "https" : "http", port: API_PORT, targetPort: API_PORT, protocol: "TCP" };
}
const clusterPort = { name: "cluster", port: CLUSTER_PORT, targetPort: CLUSTER_PORT, protocol: "TCP" };

export function meta(
  ref: ClusterRef,
  name: string,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
) {
  return {
    name,
    namespace: ref.namespace,
    labels: { ...(extra.labels ?? {}), ...clusterLabels(ref) },
    ...(extra.annotations && Object.keys(extra.annotations).length > 0
      ? { annotations: extra.annotations }
      : {}),
  };
}

/**
 * Stable per-pod DNS for Raft: sealed and unready pods must still find each other. Upstream's
 * `<name>`, and for a cluster that kept its old peer Service that one too, which its pods live under.
 */
export function headlessServices(c: NetworkCluster): KubeObject[] {
  const ref = networkRef(c);
  const names = clusterNames(ref);
  return [...new Set([names.headlessService, names.peerService])].map((n) => headlessService(c, n));
}

function headlessService(c: NetworkCluster, name: string): KubeObject {
  const ref = networkRef(c);
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ref, name),
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector: peerSelector(ref),
      ports: [apiPort(c), clusterPort],
    },
  };
}

function serviceSpec(
  type: string | undefined,
  selector: Record<string, string>,
  c: NetworkCluster,
  ranges?: string[],
) {
  return {
    type: type ?? "ClusterIP",
    selector,
    ports: [apiPort(c)],
    ...(type === "LoadBalancer" && ranges && ranges.length > 0 ? { loadBalancerSourceRanges: ranges } : {}),
  };
}

/**
 * The Service clients use: every ready voter (standbys forward to the active node), or during a
 * blue-green upgrade green alone once it can take over (clientSelector).
 */
export function clientService(c: NetworkCluster): KubeObject {
  const ref = networkRef(c);
  const selector = clientSelector({ metadata: c.metadata, status: c.status, spec: c.spec });
  const s = c.spec.service ?? {};
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ref, clusterNames(ref).clientService, { labels: s.labels, annotations: s.annotations }),
    spec: serviceSpec(s.type, selector, c, s.loadBalancerSourceRanges),
  };
}

/** Only the active node, by the label OpenBao's Kubernetes service registration keeps on it. */
export function activeService(c: NetworkCluster): KubeObject {
  const ref = networkRef(c);
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ref, clusterNames(ref).activeService),
    spec: serviceSpec("ClusterIP", { ...podSelector(ref), [LABEL_OPENBAO_ACTIVE]: "true" }, c),
  };
}

/** Read replicas, when asked for. */
export function readService(c: NetworkCluster): KubeObject | undefined {
  const ref = networkRef(c);
  const rr = c.spec.readReplicas;
  if (!rr?.service?.enabled || (rr.replicas ?? 0) === 0) return undefined;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ref, clusterNames(ref).readService, { annotations: rr.service.annotations }),
    spec: serviceSpec(rr.service.type, podSelector(ref, Component.ReadReplica), c),
  };
}

/**
 * tls.mode ACME: upstream's `<name>-acme`, through which an ACME CA reaches the pods for its
 * challenges. Not-ready pods are published, since a pod has no certificate (and so is not Ready)
 * until its challenge passes; 80 and 443 (the ports a CA dials) lead to the API port. It follows
 * the serving revision as the client Service does. When tls.acme names no domain, the certificate
 * is requested for this Service's name, `<name>-acme.<ns>.svc`, as upstream does.
 */
export function acmeService(c: NetworkCluster): KubeObject | undefined {
  if (!tlsOn(c) || c.spec.tls?.mode !== "ACME") return undefined;
  const ref = networkRef(c);
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ref, clusterNames(ref).acmeService),
    spec: {
      type: "ClusterIP",
      publishNotReadyAddresses: true,
      selector: clientSelector({ metadata: c.metadata, status: c.status, spec: c.spec }),
      ports: [
        { name: "http-80", port: 80, targetPort: API_PORT, protocol: "TCP" },
        { name: "https-443", port: 443, targetPort: API_PORT, protocol: "TCP" },
      ],
    },
  };
}

export function ingress(c: NetworkCluster): KubeObject | undefined {
  const ref = networkRef(c);
  const ing = c.spec.ingress;
  if (!ing?.enabled) return undefined;
  const names = clusterNames(ref);
  const secretName =
    ing.tlsSecretName ?? (tlsOn(c) && c.spec.tls?.mode !== "ACME" ? names.serverSecret : undefined);
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: meta(ref, names.ingress, { annotations: ing.annotations }),
    spec: {
      ...(ing.className ? { ingressClassName: ing.className } : {}),
      ...(secretName ? { tls: [{ hosts: [ing.host], secretName }] } : {}),
      rules: [
        {
          host: ing.host,
          http: {
            paths: [
              {
                path: ing.path ?? "/",
                pathType: ing.pathType ?? "Prefix",
                backend: { service: { name: names.clientService, port: { number: API_PORT } } },
              },
            ],
          },
        },
      ],
    },
  };
}

function parentRef(c: NetworkCluster) {
  const g = c.spec.gateway!;
  return {
    group: "gateway.networking.k8s.io",
    kind: "Gateway",
    name: g.gatewayRef.name,
    ...(g.gatewayRef.namespace ? { namespace: g.gatewayRef.namespace } : {}),
    ...(g.listenerName ? { sectionName: g.listenerName } : {}),
  };
}

/** What a gateway setting asks for; `missing` names the kinds the server does not serve. */
export function gatewayObjects(
  c: NetworkCluster,
  inputs: NetworkInputs,
): { objects: KubeObject[]; missing: string[] } {
  const g = c.spec.gateway;
  if (!g?.enabled) return { objects: [], missing: [] };
  const ref = networkRef(c);
  const names = clusterNames(ref);
  const objects: KubeObject[] = [];
  const missing: string[] = [];
  const backendRef = { group: "", kind: "Service", name: names.clientService, port: API_PORT };
  if (g.tlsPassthrough) {
    if (!inputs.gatewayApi.tlsRoute) missing.push("TLSRoute");
    else
      objects.push({
        apiVersion: inputs.gatewayApi.tlsRoute,
        kind: "TLSRoute",
        metadata: meta(ref, names.tlsRoute, { annotations: g.annotations }),
        spec: { parentRefs: [parentRef(c)], hostnames: [g.hostname], rules: [{ backendRefs: [backendRef] }] },
      });
    return { objects, missing };
  }
  if (!inputs.gatewayApi.httpRoute) missing.push("HTTPRoute");
  else
    objects.push({
      apiVersion: inputs.gatewayApi.httpRoute,
      kind: "HTTPRoute",
      metadata: meta(ref, names.httpRoute, { annotations: g.annotations }),
      spec: {
        parentRefs: [parentRef(c)],
        hostnames: [g.hostname],
        rules: [
          { matches: [{ path: { type: "PathPrefix", value: g.path ?? "/" } }], backendRefs: [backendRef] },
        ],
      },
    });
  // The Gateway terminates TLS and opens a new connection to OpenBao, which it must verify.
  if (tlsOn(c) && (g.backendTLS?.enabled ?? true)) {
    if (!inputs.gatewayApi.backendTLSPolicy) missing.push("BackendTLSPolicy");
    else {
      const useCa = inputs.backendCaPem !== undefined;
      if (useCa)
        objects.push({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: meta(ref, names.backendCaConfigMap),
          data: { "ca.crt": inputs.backendCaPem },
        });
      objects.push({
        apiVersion: inputs.gatewayApi.backendTLSPolicy,
        kind: "BackendTLSPolicy",
        metadata: meta(ref, names.backendTLSPolicy),
        spec: {
          targetRefs: [{ group: "", kind: "Service", name: names.clientService }],
          validation: {
            hostname: g.backendTLS?.hostname ?? `${names.clientService}.${ref.namespace}.svc`,
            ...(useCa
              ? { caCertificateRefs: [{ group: "", kind: "ConfigMap", name: names.backendCaConfigMap }] }
              : { wellKnownCACertificates: "System" }),
          },
        },
      });
    }
  }
  return { objects, missing };
}
