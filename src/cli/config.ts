import { readFileSync } from "node:fs";
import { parse } from "yaml";
import {
  asBool,
  asDuration,
  asObject,
  asPort,
  asSection,
  asString,
  asStringList,
} from "../runtime/configvalues.js";
import { DEFAULT_STUCK_AFTER_MS } from "../runtime/health.js";
import { ConfigError } from "../runtime/target.js";

/**
 * The process configuration file. Backend addresses and credentials live here (or in the
 * environment, via `${VAR}`), never in the objects the operator reconciles.
 */
export interface ProcessConfig {
  leaderElection: { enabled: boolean; namespace: string; leaseName: string };
  /** /healthz and /readyz, and /metrics too unless `metrics` names its own address. */
  probes: { port: number; host: string; stuckAfterMs: number };
  /**
   * A separate /metrics server; with `secure`, callers need a token allowed to `get` /metrics. HTTPS
   * with the certificate in certFile/keyFile, or with one the process makes itself at start
   * (`selfSigned`). `enabled: false` serves /metrics nowhere, not even on the probe port.
   */
  metrics?: {
    port: number;
    host: string;
    secure: boolean;
    certFile?: string;
    keyFile?: string;
    selfSigned?: true;
    enabled?: false;
  };
  /** The validating admission webhook of the targets' kinds (HTTPS on its own port). */
  webhook?: WebhookConfig;
  logLevel: string;
  /**
   * A client-side limit on each target's API requests; none unless set, as in controller-runtime
   * since v0.21 (the API server's priority and fairness limits, and its 429s are honoured).
   */
  client: {
    rateLimit?: { qps: number; burst: number };
    /** HTTP/2 to the API server (default true); false keeps HTTP/1.1 with a connection pool per lane. */
    http2: boolean;
    /** How a namespaced kind is watched across a target's namespaces (see ManagerOptions.watchScope). */
    watchScope: "auto" | "namespaces" | "cluster";
    /** From how many namespaces "auto" prefers one cluster-wide watch, when allowed (default 10). */
    clusterWatchFrom?: number;
  };
  /** Per-target sections, in file order: the runner's keys taken out, the rest for the target to parse. */
  targets: Map<string, TargetSection>;
}

export interface TargetSection {
  /** The only namespaces the target watches; undefined means all. */
  namespaces?: string[];
  /** Everything else in the section; the target parses it and refuses keys it does not know. */
  section: Record<string, unknown>;
}

const ROOT_KEYS = [
  "leaderElection",
  "probes",
  "metrics",
  "webhook",
  "client",
  "logLevel",
  "targets",
] as const;
const WEBHOOK_KEYS = [
  "port",
  "host",
  "observeOnly",
  "configurationName",
  "secretNamespace",
  "secretName",
  "names",
  "certFile",
  "keyFile",
  "renewCheckEvery",
] as const;

export interface WebhookConfig {
  port: number;
  host: string;
  observeOnly: boolean;
  /** The ValidatingWebhookConfiguration whose caBundle the operator keeps (own certificates only). */
  configurationName?: string;
  /** Own certificates: the Secret holding the CA and leaf, and the names the leaf is for. */
  secret?: { namespace: string; name: string; names: string[] };
  /** cert-manager's (or any) certificate, mounted as files; re-read on renewCheckEvery. */
  files?: { certFile: string; keyFile: string };
  renewCheckEveryMs: number;
}
const CLIENT_KEYS = ["qps", "burst", "http2", "watchScope", "clusterWatchFrom"] as const;
const WATCH_SCOPES = ["auto", "namespaces", "cluster"] as const;
const LEADER_ELECTION_KEYS = ["enabled", "namespace", "leaseName"] as const;
const PROBES_KEYS = ["port", "host", "stuckAfter"] as const;
const METRICS_KEYS = ["enabled", "port", "host", "secure", "certFile", "keyFile", "selfSigned"] as const;

export function loadConfigFile(path: string): ProcessConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError("--config", `cannot read ${path}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parse(expandEnv(text));
  } catch (e) {
    throw new ConfigError(path, `not valid YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  return parseProcessConfig(raw ?? {});
}

/** `${NAME}` becomes the environment variable's value; a missing variable is an error, not "". */
export function expandEnv(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined) throw new ConfigError(`\${${name}}`, "environment variable is not set");
    return v;
  });
}

export function parseProcessConfig(raw: unknown): ProcessConfig {
  const root = asSection(raw, "(config)", ROOT_KEYS);
  const le = asSection(root["leaderElection"] ?? {}, "leaderElection", LEADER_ELECTION_KEYS);
  const probes = asSection(root["probes"] ?? {}, "probes", PROBES_KEYS);
  const metrics =
    root["metrics"] === undefined ? undefined : asSection(root["metrics"], "metrics", METRICS_KEYS);
  const client = asSection(root["client"] ?? {}, "client", CLIENT_KEYS);
  const targets = asObject(root["targets"] ?? {}, "targets");
  if (Object.keys(targets).length === 0) throw new ConfigError("targets", "enable at least one target");
  return {
    leaderElection: {
      enabled: asBool(le["enabled"] ?? true, "leaderElection.enabled"),
      namespace: asString(le["namespace"] ?? "platform-operator-system", "leaderElection.namespace"),
      leaseName: asString(le["leaseName"] ?? "platform-operator", "leaderElection.leaseName"),
    },
    probes: {
      port: asPort(probes["port"] ?? 8080, "probes.port"),
      host: asString(probes["host"] ?? "0.0.0.0", "probes.host"),
      stuckAfterMs:
        probes["stuckAfter"] === undefined
          ? DEFAULT_STUCK_AFTER_MS
          : asDuration(probes["stuckAfter"], "probes.stuckAfter"),
    },
    metrics: metrics && parseMetrics(metrics),
    ...(root["webhook"] === undefined
      ? {}
      : { webhook: parseWebhook(asSection(root["webhook"], "webhook", WEBHOOK_KEYS)) }),
    logLevel: asString(root["logLevel"] ?? "info", "logLevel"),
    client: parseClient(client),
    targets: new Map(Object.entries(targets).map(([name, raw]) => [name, targetSection(raw, name)])),
  };
}

function parseClient(c: Record<string, unknown>): ProcessConfig["client"] {
  const http2 = asBool(c["http2"] ?? true, "client.http2");
  const watchScope = c["watchScope"] ?? "auto";
  if (!WATCH_SCOPES.includes(watchScope as (typeof WATCH_SCOPES)[number]))
    throw new ConfigError(
      "client.watchScope",
      `must be one of ${WATCH_SCOPES.join(", ")}, got ${JSON.stringify(watchScope)}`,
    );
  const from = c["clusterWatchFrom"];
  if (from !== undefined && !(typeof from === "number" && Number.isInteger(from) && from >= 1))
    throw new ConfigError(
      "client.clusterWatchFrom",
      `must be a whole number of at least 1, got ${JSON.stringify(from)}`,
    );
  const transport = {
    http2,
    watchScope: watchScope as ProcessConfig["client"]["watchScope"],
    ...(from === undefined ? {} : { clusterWatchFrom: from }),
  };
  return { ...transport, ...parseRateLimit(c) };
}

function parseRateLimit(c: Record<string, unknown>): Pick<ProcessConfig["client"], "rateLimit"> {
  if (c["qps"] === undefined && c["burst"] === undefined) return {};
  const qps = c["qps"];
  if (typeof qps !== "number" || !(qps > 0))
    throw new ConfigError(
      "client.qps",
      `must be a number of requests per second above 0, got ${JSON.stringify(qps)}`,
    );
  const burst = c["burst"] ?? Math.max(1, Math.ceil(qps * 1.5));
  if (typeof burst !== "number" || !Number.isInteger(burst) || burst < 1)
    throw new ConfigError(
      "client.burst",
      `must be a whole number of at least 1, got ${JSON.stringify(burst)}`,
    );
  return { rateLimit: { qps, burst } };
}

function parseMetrics(m: Record<string, unknown>): NonNullable<ProcessConfig["metrics"]> {
  const out: NonNullable<ProcessConfig["metrics"]> = {
    port: asPort(m["port"] ?? 8443, "metrics.port"),
    host: asString(m["host"] ?? "0.0.0.0", "metrics.host"),
    secure: asBool(m["secure"] ?? true, "metrics.secure"),
  };
  if ((m["certFile"] === undefined) !== (m["keyFile"] === undefined)) {
    throw new ConfigError("metrics", "set certFile and keyFile together (HTTPS), or neither");
  }
  if (m["certFile"] !== undefined) {
    out.certFile = asString(m["certFile"], "metrics.certFile");
    out.keyFile = asString(m["keyFile"], "metrics.keyFile");
  }
  if (asBool(m["selfSigned"] ?? false, "metrics.selfSigned")) {
    if (out.certFile !== undefined)
      throw new ConfigError(
        "metrics.selfSigned",
        "excludes certFile and keyFile: one certificate or the other",
      );
    out.selfSigned = true;
  }
  // Only "off" is recorded: a metrics section serves /metrics unless it says otherwise.
  if (!asBool(m["enabled"] ?? true, "metrics.enabled")) out.enabled = false;
  return out;
}

function targetSection(raw: unknown, name: string): TargetSection {
  const field = `targets.${name}`;
  const { namespaces, ...section } = asObject(raw ?? {}, field);
  return {
    namespaces: namespaces === undefined ? undefined : asStringList(namespaces, `${field}.namespaces`),
    section,
  };
}

function parseWebhook(w: Record<string, unknown>): WebhookConfig {
  const out: WebhookConfig = {
    port: asPort(w["port"] ?? 9443, "webhook.port"),
    host: asString(w["host"] ?? "0.0.0.0", "webhook.host"),
    observeOnly: asBool(w["observeOnly"] ?? false, "webhook.observeOnly"),
    renewCheckEveryMs:
      w["renewCheckEvery"] === undefined
        ? 3_600_000
        : asDuration(w["renewCheckEvery"], "webhook.renewCheckEvery"),
  };
  if (w["configurationName"] !== undefined)
    out.configurationName = asString(w["configurationName"], "webhook.configurationName");
  const files = w["certFile"] !== undefined || w["keyFile"] !== undefined;
  if (files) {
    if (w["certFile"] === undefined || w["keyFile"] === undefined)
      throw new ConfigError("webhook", "set certFile and keyFile together, or neither");
    if (w["secretName"] !== undefined)
      throw new ConfigError(
        "webhook",
        "certFile/keyFile (a mounted certificate) and secretName (the operator's own) exclude each other",
      );
    out.files = {
      certFile: asString(w["certFile"], "webhook.certFile"),
      keyFile: asString(w["keyFile"], "webhook.keyFile"),
    };
    return out;
  }
  if (w["secretName"] === undefined || w["secretNamespace"] === undefined)
    throw new ConfigError(
      "webhook",
      "name the certificate: secretName and secretNamespace (the operator issues its own), or certFile and keyFile",
    );
  const names = asStringList(w["names"] ?? [], "webhook.names");
  if (names.length === 0)
    throw new ConfigError(
      "webhook.names",
      "list the names the API server dials (the Service's DNS names, or 127.0.0.1)",
    );
  out.secret = {
    namespace: asString(w["secretNamespace"], "webhook.secretNamespace"),
    name: asString(w["secretName"], "webhook.secretName"),
    names,
  };
  return out;
}
