/**
 * spec.observability.metrics on the network side: the Service Prometheus scrapes and, where the
 * Prometheus Operator's CRD is served, the ServiceMonitor pointing at it. Pure. Names, labels, the
 * port name and the endpoint follow upstream 0.5, so dashboards and relabelings written for its
 * objects keep matching.
 */
import type { KubeObject } from "../../../../runtime/types.js";
import {
  API_PORT,
  type ClusterRef,
  Component,
  clusterLabels,
  clusterNames,
  LABEL_NAME,
  LABEL_OPENBAO_ACTIVE,
  podSelector,
} from "../../identity.js";
import { METRICS_PORT_NAME, type MetricsSettings, type ServiceMonitorSpec } from "../config/metrics.js";
import { peerSelector } from "./plan.js";

export const SERVICE_MONITOR_API_VERSION = "monitoring.coreos.com/v1";
export const SERVICE_MONITOR_KIND = "ServiceMonitor";
/** The Service's port name, which the ServiceMonitor's endpoint names (upstream's). */
export const METRICS_SERVICE_PORT = "https-metrics";
export const METRICS_PATH = "/v1/sys/metrics";
const LABEL_APP_COMPONENT = "app.kubernetes.io/component";
export const LABEL_SCRAPE_PROFILE = "openbao.org/scrape-profile";

/** Labels of both objects; the ServiceMonitor selects the Service by them. */
export function metricsLabels(ref: ClusterRef, m: MetricsSettings): Record<string, string> {
  return {
    ...clusterLabels(ref, Component.Metrics),
    [LABEL_APP_COMPONENT]: Component.Metrics,
    [LABEL_SCRAPE_PROFILE]: m.profile,
  };
}

/**
 * Active: the active voter's API listener (or its metrics-only listener when one is asked for).
 * AllNodes: every OpenBao pod, read replicas included, by a headless Service that lists pods that
 * are not ready too (a sealed standby's metrics are what one wants to see).
 */
export function metricsService(ref: ClusterRef, m: MetricsSettings): KubeObject {
  const all = m.profile === "AllNodes";
  const selector = all ? peerSelector(ref) : { ...podSelector(ref), [LABEL_OPENBAO_ACTIVE]: "true" };
  const port = m.listener
    ? { name: METRICS_SERVICE_PORT, port: m.listener.port, targetPort: METRICS_PORT_NAME, protocol: "TCP" }
    : { name: METRICS_SERVICE_PORT, port: API_PORT, targetPort: "api", protocol: "TCP" };
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: clusterNames(ref).metricsService,
      namespace: ref.namespace,
      labels: metricsLabels(ref, m),
    },
    spec: {
      type: "ClusterIP",
      ...(all ? { clusterIP: "None", publishNotReadyAddresses: true } : {}),
      selector,
      ports: [port],
    },
  };
}

export function serviceMonitor(ref: ClusterRef, m: MetricsSettings, tls: boolean): KubeObject | undefined {
  const sm = m.serviceMonitor;
  if (!sm) return undefined;
  const own = metricsLabels(ref, m);
  return {
    apiVersion: SERVICE_MONITOR_API_VERSION,
    kind: SERVICE_MONITOR_KIND,
    metadata: {
      name: clusterNames(ref).serviceMonitor,
      namespace: ref.namespace,
      // The user's labels (a Prometheus selector, say), under the operator's, which select the Service.
      labels: { ...(sm.labels ?? {}), ...own },
      ...(sm.annotations && Object.keys(sm.annotations).length > 0 ? { annotations: sm.annotations } : {}),
    },
    spec: {
      jobLabel: sm.jobLabel?.trim() || LABEL_NAME,
      namespaceSelector: { matchNames: [ref.namespace] },
      selector: { matchLabels: own },
      endpoints: [endpoint(m, sm, tls)],
    },
  };
}

function endpoint(m: MetricsSettings, sm: ServiceMonitorSpec, tls: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    port: METRICS_SERVICE_PORT,
    path: METRICS_PATH,
    params: { format: ["prometheus"] },
    scheme: tls ? "https" : "http",
  };
  if (sm.interval?.trim()) out["interval"] = sm.interval.trim();
  if (sm.scrapeTimeout?.trim()) out["scrapeTimeout"] = sm.scrapeTimeout.trim();
  const auth = sm.authorization;
  if (auth)
    out["authorization"] = {
      type: auth.type?.trim() || "Bearer",
      credentials: { name: auth.credentialsSecret.name, key: auth.credentialsSecret.key?.trim() || "token" },
    };
  const t = sm.tlsConfig;
  if (t) {
    const tlsConfig: Record<string, unknown> = {};
    if (t.serverName?.trim()) tlsConfig["serverName"] = t.serverName.trim();
    if (t.insecureSkipVerify !== undefined) tlsConfig["insecureSkipVerify"] = t.insecureSkipVerify;
    const keyRef = (r: { name: string; key?: string }) => ({ name: r.name, key: r.key?.trim() || "ca.crt" });
    if (t.caConfigMap) tlsConfig["ca"] = { configMap: keyRef(t.caConfigMap) };
    if (t.caSecret) tlsConfig["ca"] = { secret: keyRef(t.caSecret) };
    if (Object.keys(tlsConfig).length > 0) out["tlsConfig"] = tlsConfig;
  }
  if (m.profile === "AllNodes")
    out["relabelings"] = [
      { sourceLabels: ["__meta_kubernetes_pod_name"], targetLabel: "pod" },
      { sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node" },
    ];
  return out;
}
