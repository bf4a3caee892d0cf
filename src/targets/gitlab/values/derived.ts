// The first values layer: what the structured fields of a GitLabCore mean in the chart's terms. Every
// key set here is listed in DERIVED_KEYS with the field it comes from, which is also what conflict
// messages quote. Secrets are only named (Secret name and key), never read.
import semver from "semver";
import type { GitLabCoreSpec } from "../../../apis/gitlabcore.js";
import { domainHostsOf, hostsOf } from "./hostname.js";
import { setAt, type Values, type ValuesError } from "./merge.js";

/** Chart 10.4.0 is the first that takes the Envoy Gateway and GatewayClass modes (supportsConfigureEnvoy). */
export const CONFIGURE_ENVOY_MIN_CHART = "10.4.0";
/** From chart 10 on the chart bundles neither PostgreSQL nor Redis; before it, they are switched off. */
export const EXTERNAL_SERVICES_ONLY_CHART = "10.0.0";

/**
 * Each derived chart key and the field it comes from. Only keys whose field is set are derived.
 *
 * - `global.hosts.domain` ← hostname: its parent domain, or itself when it is an apex (public suffix list);
 *   or ← domain, as given
 * - `global.hosts.gitlab.name` ← hostname, as given; or `gitlab.` + domain
 * - `global.hosts.registry.name`, `global.hosts.kas.name` ← `registry.` and `kas.` + the domain
 * - `global.edition` ← edition (default `ee`): the chart's switch for the image repositories of every
 *   component (`…-ee` or `…-ce`)
 * - `global.gitlab.license.secret`/`.key` ← license.secretRef
 * - `global.psql.host`, `global.psql.password.secret`/`.key` ← postgresql; charts before 10 also get
 *   `postgresql.install: false`
 * - `global.redis.host`, `global.redis.auth.enabled: true`, `global.redis.auth.secret`/`.key` ← redis;
 *   charts before 10 also get `redis.install: false`
 * - `global.minio.enabled: false`, `global.appConfig.object_store.enabled: true`,
 *   `global.appConfig.object_store.connection.secret`/`.key` ← objectStorage.connectionSecretRef
 * - `global.openbao.enabled: true`, `openbao.install: true`, `openbao.serviceAccount.create: false`,
 *   `openbao.role.create: false`, `openbao.serviceAccount.name` ← openbao.serviceAccount.name, and
 *   `openbao.config.storage.postgresql.connection.{host,port,database,username,password.secret,password.key}`
 *   ← openbao.postgresql (port 5432, database and username `openbao` when unset); components.openbao
 *   (the newer name) the same
 * - `global.clickhouse.main.{url,database,username,password.secret,password.key}` ← clickhouse
 * - `global.certificates.customCAs` ← certificates.customCAs, each `{secret|configMap, keys}`
 * - `global.gatewayApi.enabled` ← networking: false when unset, true in every mode
 * - envoyGatewayController: `gatewayApiResources.class.enabled: true` and `global.gatewayApi.class.name`
 *   `<namespace>-<name>-gitlab` (the GatewayClass is cluster-scoped: one per instance, never shared)
 * - gatewayClass: `gatewayApiResources.class.enabled: false`, `global.gatewayApi.class.name` (the class
 *   the rendered Gateway uses)
 * - gateway: `gatewayApiResources.class.enabled: false`, `global.gatewayApi.gatewayRef.name`/`.namespace`
 *   (namespace defaults to the GitLabCore's)
 * - `gatewayApiResources.gateway.annotations` ← certManager.issuerRef of envoyGatewayController or
 *   gatewayClass: `cert-manager.io/issuer` (or `cert-manager.io/cluster-issuer`), plus
 *   `cert-manager.io/issuer-kind` and `cert-manager.io/issuer-group` for an issuer outside cert-manager.io
 * - `shared-secrets.serviceAccount.create: false`, `shared-secrets.serviceAccount.name` (the manager's
 *   ServiceAccount, when known), `shared-secrets.rbac.create: false`: the older controller's defaults
 */
export const DERIVED_FROM: Record<string, string> = {
  "global.hosts": "spec.hostname",
  "global.edition": "spec.edition",
  "global.gitlab.license": "spec.license",
  "global.psql": "spec.postgresql",
  "postgresql.install": "spec.postgresql",
  "global.redis": "spec.redis",
  "redis.install": "spec.redis",
  "global.minio": "spec.objectStorage",
  "global.appConfig.object_store": "spec.objectStorage",
  "global.openbao": "spec.openbao",
  openbao: "spec.openbao",
  "global.clickhouse": "spec.clickhouse",
  "global.certificates.customCAs": "spec.certificates.customCAs",
  "global.gatewayApi": "spec.networking",
  gatewayApiResources: "spec.networking",
  "shared-secrets": "the shared-secrets defaults",
};

/** Which structured field put a value at `dotted` (the longest matching prefix), for messages. */
export function derivedSource(dotted: string): string {
  let best: string | undefined;
  for (const prefix of Object.keys(DERIVED_FROM))
    if ((dotted === prefix || dotted.startsWith(`${prefix}.`)) && (!best || prefix.length > best.length))
      best = prefix;
  if (best) return `the operator derives ${best} from ${DERIVED_FROM[best]}`;
  // A path above derived keys, such as `global`.
  const below = Object.keys(DERIVED_FROM).find((p) => p.startsWith(`${dotted}.`));
  return below
    ? `the operator derives ${below} from ${DERIVED_FROM[below]}`
    : "the operator sets keys under it";
}

export interface DeriveInput {
  name: string;
  namespace: string;
  spec: GitLabCoreSpec;
  /**
   * The chart version being rendered: some values depend on it. Undefined when it is not known yet
   * (offline validation of a versionRef): the version-dependent keys and checks are then left out.
   */
  chartVersion: string | undefined;
  /** The ServiceAccount the operator runs as, for the shared-secrets hook. */
  managerServiceAccount?: string | undefined;
}

export function derivedValues(input: DeriveInput, errors: ValuesError[]): Values {
  const { spec } = input;
  const out: Values = {};
  const chart = input.chartVersion === undefined ? null : semver.valid(input.chartVersion);
  const known = input.chartVersion !== undefined;
  const atLeast = (v: string): boolean => chart !== null && semver.gte(chart, v);

  // spec.domain (the newer form) names the domain itself; spec.hostname names GitLab's host.
  const hostField = spec.domain !== undefined ? "spec.domain" : "spec.hostname";
  const hosts = spec.domain !== undefined ? domainHostsOf(spec.domain) : hostsOf(spec.hostname);
  if (hosts.ok) {
    setAt(out, "global.hosts.domain", hosts.hosts.domain);
    setAt(out, "global.hosts.gitlab.name", hosts.hosts.gitlab);
    setAt(out, "global.hosts.registry.name", hosts.hosts.registry);
    setAt(out, "global.hosts.kas.name", hosts.hosts.kas);
  } else errors.push({ field: hostField, message: hosts.message });

  setAt(out, "global.edition", spec.edition ?? "ee");

  if (spec.license) {
    setAt(out, "global.gitlab.license.secret", spec.license.secretRef.name);
    setAt(out, "global.gitlab.license.key", spec.license.secretRef.key);
  }

  if (spec.postgresql) {
    setAt(out, "global.psql.host", spec.postgresql.host);
    setAt(out, "global.psql.password.secret", spec.postgresql.passwordSecretRef.name);
    setAt(out, "global.psql.password.key", spec.postgresql.passwordSecretRef.key);
    if (chart && !atLeast(EXTERNAL_SERVICES_ONLY_CHART)) setAt(out, "postgresql.install", false);
  }

  if (spec.redis) {
    setAt(out, "global.redis.host", spec.redis.host);
    setAt(out, "global.redis.auth.enabled", true);
    setAt(out, "global.redis.auth.secret", spec.redis.passwordSecretRef.name);
    setAt(out, "global.redis.auth.key", spec.redis.passwordSecretRef.key);
    if (chart && !atLeast(EXTERNAL_SERVICES_ONLY_CHART)) setAt(out, "redis.install", false);
  }

  if (spec.objectStorage) {
    // Naming the connection turns consolidated object storage on: without it the connection is unused.
    setAt(out, "global.minio.enabled", false);
    setAt(out, "global.appConfig.object_store.enabled", true);
    setAt(
      out,
      "global.appConfig.object_store.connection.secret",
      spec.objectStorage.connectionSecretRef.name,
    );
    setAt(out, "global.appConfig.object_store.connection.key", spec.objectStorage.connectionSecretRef.key);
  }

  // spec.components.openbao is the newer name of spec.openbao; the API server refuses both at once.
  const openbao = spec.components?.openbao ?? spec.openbao;
  if (openbao) {
    const pg = openbao.postgresql;
    setAt(out, "global.openbao.enabled", true);
    setAt(out, "openbao.install", true);
    // The administrator provides the ServiceAccount and its Role: the operator applies no RBAC.
    setAt(out, "openbao.serviceAccount.create", false);
    setAt(out, "openbao.role.create", false);
    if (openbao.serviceAccount?.name) setAt(out, "openbao.serviceAccount.name", openbao.serviceAccount.name);
    const conn = "openbao.config.storage.postgresql.connection";
    setAt(out, `${conn}.host`, pg.host);
    setAt(out, `${conn}.port`, pg.port ?? 5432);
    setAt(out, `${conn}.database`, pg.database ?? "openbao");
    setAt(out, `${conn}.username`, pg.username ?? "openbao");
    setAt(out, `${conn}.password.secret`, pg.passwordSecretRef.name);
    setAt(out, `${conn}.password.key`, pg.passwordSecretRef.key);
  }

  if (spec.clickhouse) {
    const ch = spec.clickhouse;
    setAt(out, "global.clickhouse.main.url", ch.url);
    setAt(out, "global.clickhouse.main.database", ch.database);
    setAt(out, "global.clickhouse.main.username", ch.user);
    setAt(out, "global.clickhouse.main.password.secret", ch.passwordSecretRef.name);
    setAt(out, "global.clickhouse.main.password.key", ch.passwordSecretRef.key);
  }

  const cas = spec.certificates?.customCAs;
  if (cas && cas.length > 0)
    setAt(
      out,
      "global.certificates.customCAs",
      // The chart's own entry shape: secret or configMap, and keys when given.
      cas.map((ca) => ({
        ...(ca.secret !== undefined ? { secret: ca.secret } : { configMap: ca.configMap }),
        ...(ca.keys && ca.keys.length > 0 ? { keys: [...ca.keys] } : {}),
      })),
    );

  deriveNetworking(input, out, errors, chart, (v) => !known || atLeast(v));

  setAt(out, "shared-secrets.serviceAccount.create", false);
  if (input.managerServiceAccount)
    setAt(out, "shared-secrets.serviceAccount.name", input.managerServiceAccount);
  setAt(out, "shared-secrets.rbac.create", false);
  return out;
}

function deriveNetworking(
  input: DeriveInput,
  out: Values,
  errors: ValuesError[],
  chart: string | null,
  atLeast: (v: string) => boolean,
): void {
  const net = input.spec.networking;
  const modes = net
    ? (["envoyGatewayController", "gatewayClass", "gateway"] as const).filter((m) => net[m] !== undefined)
    : [];
  if (!net || modes.length === 0) {
    // No mode: the Gateway API is off and networking is left to the free-form values.
    setAt(out, "global.gatewayApi.enabled", false);
    return;
  }
  if (modes.length > 1) {
    errors.push({
      field: "spec.networking",
      message: `set at most one of envoyGatewayController, gatewayClass and gateway (found ${modes.join(", ")})`,
    });
    return;
  }
  const mode = modes[0]!;
  if ((mode === "envoyGatewayController" || mode === "gatewayClass") && !atLeast(CONFIGURE_ENVOY_MIN_CHART)) {
    errors.push({
      field: `spec.networking.${mode}`,
      message: `needs chart ${CONFIGURE_ENVOY_MIN_CHART} or later; the target chart is ${chart ?? String(input.chartVersion)}`,
    });
    return;
  }
  setAt(out, "global.gatewayApi.enabled", true);
  if (mode === "envoyGatewayController") {
    setAt(out, "gatewayApiResources.class.enabled", true);
    setAt(out, "global.gatewayApi.class.name", `${input.namespace}-${input.name}-gitlab`);
    // The class the operator provisions is Envoy Gateway's: its extensions always apply.
    setAt(out, "global.gatewayApi.configureEnvoy", true);
    issuerAnnotations(out, net.envoyGatewayController?.certManager?.issuerRef);
  } else if (mode === "gatewayClass") {
    setAt(out, "gatewayApiResources.class.enabled", false);
    setAt(out, "global.gatewayApi.class.name", net.gatewayClass!.name);
    setAt(out, "global.gatewayApi.configureEnvoy", net.gatewayClass!.configureEnvoy ?? false);
    issuerAnnotations(out, net.gatewayClass?.certManager?.issuerRef);
  } else {
    setAt(out, "gatewayApiResources.class.enabled", false);
    setAt(out, "global.gatewayApi.gatewayRef.name", net.gateway!.name);
    setAt(out, "global.gatewayApi.gatewayRef.namespace", net.gateway!.namespace ?? input.namespace);
    const configure = net.gateway!.configureEnvoy ?? false;
    // Charts before 10.4.0 know no configureEnvoy: asking for it there is an error, leaving it off is not.
    if (configure && !atLeast(CONFIGURE_ENVOY_MIN_CHART))
      errors.push({
        field: "spec.networking.gateway.configureEnvoy",
        message: `needs chart ${CONFIGURE_ENVOY_MIN_CHART} or later; the target chart is ${chart ?? String(input.chartVersion)}`,
      });
    else if (atLeast(CONFIGURE_ENVOY_MIN_CHART)) setAt(out, "global.gatewayApi.configureEnvoy", configure);
  }
}

type IssuerRef = { name: string; kind?: string | undefined; group?: string | undefined };

function issuerAnnotations(out: Values, ref: IssuerRef | undefined): void {
  if (!ref) return;
  const kind = ref.kind ?? "Issuer";
  const group = ref.group ?? "cert-manager.io";
  // Annotation keys contain dots, so they are set as one key under `annotations`, not as a path.
  const annotations: Values = {};
  if (group === "cert-manager.io") {
    annotations[kind === "ClusterIssuer" ? "cert-manager.io/cluster-issuer" : "cert-manager.io/issuer"] =
      ref.name;
  } else {
    annotations["cert-manager.io/issuer"] = ref.name;
    annotations["cert-manager.io/issuer-kind"] = kind;
    annotations["cert-manager.io/issuer-group"] = group;
  }
  setAt(out, "gatewayApiResources.gateway.annotations", annotations);
}
