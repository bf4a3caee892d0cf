// The operator's metrics as registered once every target's metric modules are loaded: what its
// dashboards and alert rules may query.

/** Each registered metric name with the label names it was declared with. */
export async function registeredMetrics(): Promise<Map<string, { labels: Set<string> }>> {
  const { registry } = await import("../../src/runtime/metrics.js");
  for (const m of [
    "vault/metrics",
    "openbao/metrics",
    "openbao/adminops/backup/metrics",
    "openbao/drill/metrics",
    "openbao/adminops/upgrade/core/metrics",
    "openbao/workload/certs/metrics",
    "openbao/restore/metrics",
    "openbao/baoclient/client",
    "gitlab/metrics",
    "gitlab/release-metrics",
  ])
    await import(`../../src/targets/${m}.js`);
  const out = new Map<string, { labels: Set<string> }>();
  for (const { name } of await registry.getMetricsAsJSON()) {
    const metric = registry.getSingleMetric(name) as unknown as { labelNames?: readonly string[] };
    out.set(name, { labels: new Set(metric.labelNames ?? []) });
  }
  return out;
}

/** Prometheus' own series and the default process and Node.js collectors: there without the operator. */
export const BUILTIN_METRIC = /^(up|process_[a-z0-9_]+|nodejs_[a-z0-9_]+)$/;
