/**
 * Server-wide settings from spec.configuration, the telemetry stanza and declarative plugins. Each
 * spec field maps to the OpenBao setting of the same meaning; fields without one are refused by name.
 */

import { ConfigError } from "./errors.js";
import { attrs, block, type HclBlock, type HclNode } from "./hcl.js";
import { DEFAULT_PROMETHEUS_RETENTION } from "./metrics.js";
import type { ConfigPaths } from "./options.js";
import type { PluginView, SpecView } from "./spec-view.js";
import { isObject, mapSettings, objectList } from "./values.js";

export function renderServerSettings(spec: SpecView, paths: ConfigPaths): HclNode[] {
  const c = spec.configuration ?? {};
  const log = c.logging ?? {};
  const plugin = c.plugin;
  const wantsPlugins = pluginDirectoryWanted(spec);
  return attrs(
    {
      ui: c.ui ?? true,
      log_level: c.logLevel,
      log_format: log.format,
      log_file: log.file,
      log_rotate_bytes: log.rotateBytes,
      log_rotate_duration: log.rotateDuration,
      log_rotate_max_files: log.rotateMaxFiles,
      pid_file: log.pidFile,
      default_lease_ttl: c.defaultLeaseTTL,
      max_lease_ttl: c.maxLeaseTTL,
      cache_size: c.cacheSize,
      disable_cache: c.disableCache,
      // OpenBao takes a list of locks to watch; the upstream switch turns on the core state lock.
      detect_deadlocks: c.detectDeadlocks ? "statelock" : undefined,
      enable_response_header_hostname: c.enableResponseHeaderHostname,
      enable_response_header_raft_node_id: c.enableResponseHeaderRaftNodeID,
      imprecise_lease_role_tracking: c.impreciseLeaseRoleTracking,
      introspection_endpoint: c.introspectionEndpoint,
      raw_storage_endpoint: c.rawStorageEndpoint,
      unsafe_allow_api_audit_creation: c.unsafeAllowAPIAuditCreation,
      allow_audit_log_prefixing: c.allowAuditLogPrefixing,
      plugin_directory: wantsPlugins ? paths.pluginDir : undefined,
      plugin_auto_download: plugin?.autoDownload,
      plugin_auto_register: plugin?.autoRegister,
      plugin_download_behavior: downloadBehavior(plugin?.downloadBehavior),
      plugin_file_permissions: plugin?.filePermissions,
      plugin_file_uid: plugin?.fileUID,
    },
    "configuration",
  );
}

/**
 * Whether the config names a plugin directory (and the pod must then mount one): only when
 * `spec.plugins` declares at least one plugin, as upstream renders it since 0.4.1 (upstream found
 * OpenBao 2.6 refusing the setting otherwise), so `configuration.plugin`'s download settings alone
 * do not bring one.
 */
export function pluginDirectoryWanted(spec: SpecView): boolean {
  return objectList(spec.plugins, "plugins").length > 0;
}

/**
 * OpenBao knows two answers to a failed plugin download: `fail` (its default: the server does not
 * start) and `continue` (it starts without the plugin). Upstream's schema offers `standard` and
 * `direct` and passes them through, which OpenBao refuses at start, so neither has a behaviour there;
 * both are taken as OpenBao's default, `fail`, the one that never starts a server missing a plugin
 * it was told to have. OpenBao's own two values are passed as they are.
 */
export function downloadBehavior(given: string | undefined): string | undefined {
  if (given === "standard" || given === "direct") return "fail";
  return given;
}

const TELEMETRY: Record<string, string> = {
  circonusAPIApp: "circonus_api_app",
  circonusAPIKey: "circonus_api_token",
  circonusAPIURL: "circonus_api_url",
  circonusBrokerID: "circonus_broker_id",
  circonusBrokerSelectTag: "circonus_broker_select_tag",
  circonusCheckDisplayName: "circonus_check_display_name",
  circonusCheckForceMetricActivation: "circonus_check_force_metric_activation",
  circonusCheckID: "circonus_check_id",
  circonusCheckInstanceID: "circonus_check_instance_id",
  circonusCheckSearchTag: "circonus_check_search_tag",
  circonusCheckTags: "circonus_check_tags",
  circonusSubmissionInterval: "circonus_submission_interval",
  circonusSubmissionURL: "circonus_submission_url",
  disableHostname: "disable_hostname",
  dogStatsdAddress: "dogstatsd_addr",
  enableHostnameLabel: "enable_hostname_label",
  leaseMetricsEpsilon: "lease_metrics_epsilon",
  maximumGaugeCardinality: "maximum_gauge_cardinality",
  metricsPrefix: "metrics_prefix",
  numLeaseMetricsBuckets: "num_lease_metrics_buckets",
  addLeaseMetricsNamespaceLabels: "add_lease_metrics_namespace_labels",
  prometheusRetentionTime: "prometheus_retention_time",
  stackdriverDebugLogs: "stackdriver_debug_logs",
  stackdriverLocation: "stackdriver_location",
  stackdriverNamespace: "stackdriver_namespace",
  stackdriverProjectID: "stackdriver_project_id",
  statsdAddress: "statsd_address",
  statsiteAddress: "statsite_address",
  usageGaugePeriod: "usage_gauge_period",
};

/**
 * The telemetry stanza from spec.telemetry. With `prometheus` (observability.metrics on), upstream's
 * Prometheus settings are laid over it: metrics without a host name prefix, kept 30 s unless
 * spec.telemetry says how long.
 */
export function renderTelemetry(spec: SpecView, prometheus = false): HclBlock[] {
  const t = spec.telemetry;
  if (t === undefined && !prometheus) return [];
  if (t !== undefined && !isObject(t)) throw new ConfigError("telemetry", "must be an object");
  const { dogStatsdTags, ...rest } = t ?? {};
  const settings = mapSettings(rest, "telemetry", TELEMETRY, "OpenBao's telemetry stanza");
  if (prometheus) {
    settings["disable_hostname"] = true;
    settings["prometheus_retention_time"] ??= DEFAULT_PROMETHEUS_RETENTION;
  }
  let tags: string[] | undefined;
  if (dogStatsdTags !== undefined) {
    if (!Array.isArray(dogStatsdTags) || dogStatsdTags.some((v) => typeof v !== "string"))
      throw new ConfigError("telemetry.dogStatsdTags", "must be a list of strings");
    tags = dogStatsdTags as string[];
  }
  return [block("telemetry", [], attrs({ ...settings, dogstatsd_tags: tags }, "telemetry"))];
}

/** `plugin "<type>" "<name>"` stanzas: OpenBao downloads (image) or finds (command) and registers them. */
export function renderPlugins(spec: SpecView): HclBlock[] {
  const seen = new Set<string>();
  return objectList<PluginView>(spec.plugins, "plugins").map((p, i) => {
    const field = `plugins[${i}]`;
    for (const required of ["type", "name"] as const)
      if (typeof p[required] !== "string" || p[required] === "")
        throw new ConfigError(`${field}.${required}`, "is required");
    const id = `${p.type}/${p.name}`;
    if (seen.has(id))
      throw new ConfigError(`${field}.name`, `declares ${p.type} plugin ${p.name} a second time`);
    seen.add(id);
    if (p.image === undefined && p.command === undefined)
      throw new ConfigError(`${field}.image`, "or command is required");
    if (p.sha256sum !== undefined && !/^[0-9a-fA-F]{64}$/.test(p.sha256sum))
      throw new ConfigError(`${field}.sha256sum`, "must be 64 hexadecimal digits");
    return block(
      "plugin",
      [p.type, p.name],
      attrs(
        {
          image: p.image,
          version: p.version,
          binary_name: p.binaryName,
          sha256sum: p.sha256sum,
          command: p.command,
          args: p.args,
          env: p.env,
        },
        field,
      ),
    );
  });
}
