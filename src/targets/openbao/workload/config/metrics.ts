/**
 * What `spec.observability.metrics` asks of the workload, resolved once with upstream 0.5's
 * defaults, so the config renderer, the pod template and the networking plan agree. Pure.
 *
 * - Active (the default) scrapes the active node's API listener, with a token: a metrics Service
 *   selecting the active pod and, by default, a ServiceMonitor.
 * - AllNodes scrapes every pod, through a listener that serves only metrics (OpenBao ≥ 2.5.0),
 *   without a token unless `unauthenticatedMetricsAccess: false`; the API listener then stops
 *   serving them. Not with ACME, where the pods have no certificate of their own to serve it with.
 */
import type { OpenBaoClusterSpec } from "../../../../apis/openbaocluster.js";
import { ConfigError } from "./errors.js";
import { requireRelease } from "./release.js";

export type ScrapeProfile = "Active" | "AllNodes";
type MetricsSpec = NonNullable<NonNullable<OpenBaoClusterSpec["observability"]>["metrics"]>;
export type ServiceMonitorSpec = NonNullable<MetricsSpec["serviceMonitor"]>;

export interface MetricsSettings {
  profile: ScrapeProfile;
  /** The metrics-only listener, when there is one. */
  listener?: { port: number; unauthenticated: boolean };
  /** The ServiceMonitor to write where its CRD is served; undefined when turned off. */
  serviceMonitor?: ServiceMonitorSpec;
}

export const DEFAULT_METRICS_PORT = 8202;
/** The pods' port name for the metrics-only listener; the metrics Service targets it by name. */
export const METRICS_PORT_NAME = "metrics";
/** Upstream's Prometheus defaults for the telemetry stanza when metrics are on. */
export const DEFAULT_PROMETHEUS_RETENTION = "30s";

/** The minimum OpenBao that knows `telemetry { metrics_only }` on a listener. */
const LISTENER_SINCE = { major: 2, minor: 5, patch: 0 };

type SpecPart = Partial<Pick<OpenBaoClusterSpec, "observability" | "tls" | "version">>;

/** Undefined when metrics are off; throws ConfigError naming the field a setting cannot work with. */
export function metricsSettings(spec: SpecPart): MetricsSettings | undefined {
  const m = spec.observability?.metrics;
  if (!m?.enabled) return undefined;
  const profile: ScrapeProfile = m.scrapeProfile === "AllNodes" ? "AllNodes" : "Active";
  const all = profile === "AllNodes";
  const l = m.metricsOnlyListener;
  const wantListener = l?.enabled ?? all;
  const out: MetricsSettings = { profile };
  if (wantListener) {
    const field = "observability.metrics.metricsOnlyListener";
    if (spec.tls?.enabled !== false && spec.tls?.mode === "ACME")
      throw new ConfigError(field, "is not supported with tls.mode ACME (scrapeProfile AllNodes needs it)");
    requireRelease(spec.version, LISTENER_SINCE, field);
    out.listener = {
      port: l?.port ?? DEFAULT_METRICS_PORT,
      unauthenticated: l?.unauthenticatedMetricsAccess ?? all,
    };
  }
  if (m.serviceMonitor?.enabled !== false) out.serviceMonitor = m.serviceMonitor ?? { enabled: true };
  return out;
}

/**
 * The same, for builders that run after the config rendered (which refuses a setting that cannot
 * work, naming the field): a refused setting here means no metrics objects, not a second error.
 */
export function metricsSettingsOrNone(spec: { spec: SpecPart }): MetricsSettings | undefined {
  try {
    return metricsSettings(spec.spec);
  } catch (e) {
    if (e instanceof ConfigError) return undefined;
    throw e;
  }
}
