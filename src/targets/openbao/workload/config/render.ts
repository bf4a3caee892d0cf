/**
 * config.hcl for one component of one cluster. Pure: the same cluster and options give the same
 * bytes, so the config hash changes only when the configuration does. Per-pod values (node id,
 * API and cluster addresses, pod name) are not in the file — one file serves every pod — but come
 * from the environment variables `configEnv` lists, which OpenBao reads in preference to the file.
 */
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { servingRevision } from "../../cluster-ref.js";
import {
  ANNOTATION_PEER_SERVICE,
  API_PORT,
  CLUSTER_PORT,
  type ClusterRef,
  Component,
  clusterNames,
  clusterRefOf,
  podAddress,
} from "../../identity.js";
import { renderAuditDevices } from "./audit.js";
import { checkAuditFileStorage, placedAuditDevices } from "./audit-storage.js";
import { ConfigError } from "./errors.js";
import { attrs, block, type HclBlock, type HclNode, type HclValue, renderNodes } from "./hcl.js";
import { listenerTlsPolicy } from "./listener-tls.js";
import { type MetricsSettings, metricsSettings } from "./metrics.js";
import { type ConfigPaths, DEFAULT_PATHS, type RenderOptions } from "./options.js";
import { renderSeal } from "./seal.js";
import { renderPlugins, renderServerSettings, renderTelemetry } from "./settings.js";
import { type SpecView, specView } from "./spec-view.js";
import { isObject, optionalString } from "./values.js";

export type TLSSource = "disabled" | "files" | "acme";

/** How the listener gets its certificate: none, the mounted Secret files, or OpenBao's ACME client. */
export function tlsSource(spec: SpecView): TLSSource {
  if (spec.tls?.enabled === false || spec.configuration?.listener?.tlsDisable === true) return "disabled";
  return spec.tls?.mode === "ACME" ? "acme" : "files";
}

export function resolvedPaths(opts: RenderOptions): ConfigPaths {
  return { ...DEFAULT_PATHS, ...(opts.paths ?? {}) };
}

/** Name and namespace, checked: they end up in the file and in DNS names. */
export function clusterRef(cluster: OpenBaoCluster): ClusterRef {
  const name = cluster.metadata?.name ?? "";
  const namespace = cluster.metadata?.namespace ?? "default";
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(name))
    throw new ConfigError("metadata.name", "must be a DNS name");
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(namespace))
    throw new ConfigError("metadata.namespace", "must be a DNS label");
  const peer = cluster.metadata?.annotations?.[ANNOTATION_PEER_SERVICE];
  if (peer !== undefined && !/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/.test(peer))
    throw new ConfigError(`metadata.annotations["${ANNOTATION_PEER_SERVICE}"]`, "must be a DNS label");
  return clusterRefOf({ ...cluster.metadata, namespace });
}

/** DNS names of the voters Raft joins through. */
export function peerHosts(cluster: OpenBaoCluster, opts: RenderOptions): string[] {
  if (opts.peers) return opts.peers;
  // The serving revision's pods (`<name>-<revision>-N` after a blue-green upgrade).
  const revision = servingRevision(cluster);
  const ref = revision ? { ...clusterRef(cluster), revision } : clusterRef(cluster);
  const replicas = specView(cluster).replicas ?? 3;
  return Array.from({ length: replicas }, (_, i) =>
    podAddress(ref, i, Component.Server, opts.clusterDomain ?? "cluster.local"),
  );
}

/**
 * The CA bundle a private ACME directory is verified with, as the PEM the workload must write to
 * paths.acmeCAFile: configuration.acmeCARoot when it holds PEM text. Undefined when the bundle comes
 * from tls.acme.caCertSecretRef (mounted there) or from a path, or when there is none.
 */
export function acmeCARootPem(cluster: OpenBaoCluster): string | undefined {
  return pemRoot(specView(cluster));
}

function pemRoot(spec: SpecView): string | undefined {
  const root = optionalString(spec.configuration?.acmeCARoot, "configuration.acmeCARoot");
  return root?.includes("-----BEGIN") ? root : undefined;
}

/** Where OpenBao reads the ACME CA bundle: a path given as acmeCARoot, else the mounted bundle file. */
function acmeCARootFile(spec: SpecView, paths: ConfigPaths): string | undefined {
  const root = optionalString(spec.configuration?.acmeCARoot, "configuration.acmeCARoot");
  if (root !== undefined && pemRoot(spec) === undefined) {
    if (!root.startsWith("/"))
      throw new ConfigError("configuration.acmeCARoot", "must be PEM text or an absolute path");
    return root;
  }
  return root !== undefined || spec.tls?.acme?.caCertSecretRef ? paths.acmeCAFile : undefined;
}

/**
 * ACME names: upstream's single `domain` or the `domains` list; with neither, upstream's default,
 * the ACME Service's own name `<name>-acme.<ns>.svc` (for an ACME CA inside the cluster, which
 * reaches the pods through that Service).
 */
export function acmeDomains(spec: SpecView, ref: ClusterRef): string[] {
  const acme = spec.tls?.acme;
  if (!isObject(acme)) throw new ConfigError("tls.acme", "is required for tls.mode ACME");
  const domain = optionalString(acme.domain, "tls.acme.domain");
  const list = acme.domains ?? [];
  if (!Array.isArray(list) || list.some((d) => typeof d !== "string"))
    throw new ConfigError("tls.acme.domains", "must be a list of names");
  if (domain && list.length) throw new ConfigError("tls.acme", "give domain or domains, not both");
  if (list.length) return list;
  return domain ? [domain] : [`${clusterNames(ref).acmeService}.${ref.namespace}.svc`];
}

function renderStorage(
  cluster: OpenBaoCluster,
  spec: SpecView,
  opts: RenderOptions,
  paths: ConfigPaths,
): HclBlock {
  const tls = tlsSource(spec);
  const scheme = tls === "disabled" ? "http" : "https";
  const port = opts.peerPort ?? API_PORT;
  const acmeName = tls === "acme" ? acmeDomains(spec, clusterRef(cluster))[0] : undefined;
  const acmeCA = acmeCARootFile(spec, paths);
  const joins = peerHosts(cluster, opts).map((host, i) => {
    if (!/^[A-Za-z0-9.-]+$/.test(host)) throw new ConfigError(`peers[${i}]`, "is not a DNS name or address");
    return block(
      "retry_join",
      [],
      attrs({
        leader_api_addr: `${scheme}://${host}:${port}`,
        // The peer's certificate is checked against the cluster CA and its own pod name; with ACME
        // the certificate names the public domain, not the pod.
        leader_ca_cert_file: tls === "files" ? paths.tlsCAFile : tls === "acme" ? acmeCA : undefined,
        leader_tls_servername: tls === "files" ? host : acmeName,
      }),
    );
  });
  const readReplica = opts.component === Component.ReadReplica;
  return block(
    "storage",
    ["raft"],
    [
      ...attrs({
        path: paths.dataDir,
        performance_multiplier: spec.configuration?.raft?.performanceMultiplier,
        retry_join_as_non_voter: readReplica || opts.nonVoter ? true : undefined,
      }),
      ...joins,
    ],
  );
}

/**
 * OpenBao trusts PROXY headers always (use_always) or only from listed proxies (allow_authorized
 * takes connections without one from elsewhere, deny_unauthorized refuses them). Upstream's allow_any
 * is not a behaviour OpenBao knows and would stop the server, so it is refused by name; its samples'
 * use_proxy_protocol is taken as use_always.
 */
function proxyProtocol(spec: SpecView): Record<string, HclValue | undefined> {
  const listener = spec.configuration?.listener;
  // Upstream's samples spell "always use the header" use_proxy_protocol; OpenBao calls it use_always.
  const given = listener?.proxyProtocolBehavior;
  const behavior = given === "use_proxy_protocol" ? "use_always" : given;
  const addrs = listener?.proxyProtocolAuthorizedAddrs;
  const addrsField = "configuration.listener.proxyProtocolAuthorizedAddrs";
  if (behavior === "allow_any")
    throw new ConfigError(
      "configuration.listener.proxyProtocolBehavior",
      "allow_any is not supported by OpenBao; use allow_authorized with proxyProtocolAuthorizedAddrs, or use_always",
    );
  if (behavior !== undefined && !["use_always", "allow_authorized", "deny_unauthorized"].includes(behavior))
    throw new ConfigError(
      "configuration.listener.proxyProtocolBehavior",
      `${JSON.stringify(behavior)} is not a behaviour`,
    );
  addrs?.forEach((a, i) => {
    if (!isAddressOrCidr(a))
      throw new ConfigError(`${addrsField}[${i}]`, `${JSON.stringify(a)} is not an IP address or CIDR`);
  });
  if ((behavior === "allow_authorized" || behavior === "deny_unauthorized") && !addrs?.length)
    throw new ConfigError(addrsField, `is required by proxyProtocolBehavior ${behavior}`);
  if (addrs?.length && (behavior === undefined || behavior === "use_always"))
    throw new ConfigError(
      addrsField,
      `is only read with proxyProtocolBehavior allow_authorized or deny_unauthorized, not ${behavior ?? "unset"}`,
    );
  return {
    proxy_protocol_behavior: behavior,
    proxy_protocol_authorized_addrs: addrs?.length ? [...addrs] : undefined,
  };
}

/** "10.0.0.1", "10.0.0.0/8", "fd00::/8": an address, or a network with a prefix length that fits it. */
export function isAddressOrCidr(value: string): boolean {
  const [addr = "", prefix, extra] = value.split("/");
  if (extra !== undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * The API listener and, with a metrics-only listener, that one: it serves /v1/sys/metrics alone on
 * its port, with the API listener's certificate (without a token when asked), and the API
 * listener stops serving metrics, so the one way to them is the one the NetworkPolicy opens.
 */
function renderListeners(
  spec: SpecView,
  ref: ClusterRef,
  opts: RenderOptions,
  paths: ConfigPaths,
  metrics: MetricsSettings | undefined,
  runningVersion: string | undefined,
): HclBlock[] {
  const policy = attrs(listenerTlsPolicy(spec, runningVersion), "configuration.listener");
  const api = renderListener(spec, ref, opts, paths);
  const apiWithPolicy: HclBlock = { ...api, body: [...api.body, ...policy] };
  const only = metrics?.listener;
  if (!only) return [apiWithPolicy];
  const tls = tlsSource(spec);
  const address = (opts.listenAddress ?? `0.0.0.0:${API_PORT}`).replace(/:\d+$/, `:${only.port}`);
  const metricsListener = block(
    "listener",
    ["tcp"],
    [
      ...attrs({ address }),
      ...(tls === "disabled"
        ? attrs({ tls_disable: true })
        : attrs({
            tls_cert_file: paths.tlsCertFile,
            tls_key_file: paths.tlsKeyFile,
            tls_client_ca_file: paths.tlsCAFile,
          })),
      ...policy,
      block(
        "telemetry",
        [],
        attrs({ metrics_only: true, unauthenticated_metrics_access: only.unauthenticated }),
      ),
    ],
  );
  const apiWithout: HclBlock = {
    ...apiWithPolicy,
    body: [...apiWithPolicy.body, block("telemetry", [], attrs({ disallow_metrics: true }))],
  };
  return [apiWithout, metricsListener];
}

function renderListener(spec: SpecView, ref: ClusterRef, opts: RenderOptions, paths: ConfigPaths): HclBlock {
  const tls = tlsSource(spec);
  const acme = spec.tls?.acme;
  const common = attrs(
    {
      address: opts.listenAddress ?? `0.0.0.0:${API_PORT}`,
      cluster_address: opts.clusterListenAddress ?? `0.0.0.0:${CLUSTER_PORT}`,
      ...proxyProtocol(spec),
    },
    "configuration.listener",
  );
  if (tls === "disabled") return block("listener", ["tcp"], [...common, ...attrs({ tls_disable: true })]);
  if (tls === "files")
    return block(
      "listener",
      ["tcp"],
      [
        ...common,
        ...attrs({
          tls_cert_file: paths.tlsCertFile,
          tls_key_file: paths.tlsKeyFile,
          tls_client_ca_file: paths.tlsCAFile,
        }),
      ],
    );
  if (!acme?.directoryURL) throw new ConfigError("tls.acme.directoryURL", "is required for tls.mode ACME");
  return block(
    "listener",
    ["tcp"],
    [
      ...common,
      ...attrs(
        {
          tls_acme_ca_directory: acme.directoryURL,
          tls_acme_email: acme.email,
          tls_acme_domains: acmeDomains(spec, ref),
          tls_acme_cache_path: paths.acmeCacheDir,
          tls_acme_ca_root: acmeCARootFile(spec, paths),
        },
        "tls.acme",
      ),
    ],
  );
}

function header(cluster: OpenBaoCluster, opts: RenderOptions): string {
  const ref = clusterRef(cluster);
  const lines = [
    `# OpenBao server configuration for OpenBaoCluster ${ref.namespace}/${ref.name},`,
    `# component ${opts.component ?? Component.Server}. Rendered by platform-operator: edits are overwritten.`,
  ];
  if (opts.revision !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,63}$/.test(opts.revision))
      throw new ConfigError("revision", "must be 1-63 letters, digits, '.', '_' or '-'");
    lines.push(`# revision ${opts.revision}`);
  }
  return lines.join("\n");
}

/**
 * The config for `cluster`. Throws ConfigError naming the spec field when something cannot be
 * rendered; nothing a spec string holds can add a stanza or an attribute.
 */
export function renderConfig(cluster: OpenBaoCluster, opts: RenderOptions = {}): string {
  const ref = clusterRef(cluster);
  const spec = specView(cluster);
  const paths = resolvedPaths(opts);
  const metrics = metricsSettings(cluster.spec);
  const audit = placedAuditDevices(cluster);
  checkAuditFileStorage(cluster, audit, paths.dataDir);
  const nodes: HclNode[] = [
    renderStorage(cluster, spec, opts, paths),
    ...renderListeners(spec, ref, opts, paths, metrics, cluster.status?.currentVersion),
    renderSeal(spec, paths),
    // Namespace from the file, pod name from BAO_K8S_POD_NAME: OpenBao labels its own pod with its
    // active/sealed/initialized state, which the Services select on.
    block("service_registration", ["kubernetes"], attrs({ namespace: ref.namespace })),
    ...renderServerSettings(spec, paths),
    ...renderTelemetry(spec, metrics !== undefined),
    ...renderAuditDevices(audit),
    ...renderPlugins(spec),
  ];
  return `${header(cluster, opts)}\n\n${renderNodes(nodes)}\n`;
}

/** sha256 of a rendered config, hex; the pod template carries it so a change rolls the pods. */
export function configHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
