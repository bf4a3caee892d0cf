import { asBool, asDuration, asSection, asString, asStringList } from "../../runtime/configvalues.js";
import { errorMessage } from "../../runtime/errors.js";
import { parseLabelSelector } from "../../runtime/labels.js";
import { ConfigError } from "../../runtime/target.js";
import { PLATFORM_SETTINGS, type PlatformSetting } from "./platform.js";

/**
 * The audience of the ServiceAccount tokens the target's Jobs and its upgrade present to OpenBao's
 * JWT auth, and the bound audience of the role the OIDC bootstrap creates: upstream's
 * serviceAccountToken.openBaoAudience default.
 */
export const DEFAULT_OPENBAO_AUDIENCE = "openbao-internal";

/**
 * Who sets a tenant namespace's Pod Security labels (upstream's tenancy.namespacePodSecurityLabels
 * mode): the provisioner (`enforce`, restricted), or a platform layer such as Rancher (`external`:
 * the provisioner leaves the namespace's labels as they are, whatever they say).
 */
export type PodSecurityLabelMode = "enforce" | "external";

/** The namespaces the tenant provisioner may not onboard, besides the operator's own (tenant/guard.ts). */
export interface DeniedNamespaces {
  names: readonly string[];
  prefixes: readonly string[];
}

/** Upstream's chart defaults (admissionPolicies.provisionerRBAC). */
export const DEFAULT_DENIED_NAMESPACES: DeniedNamespaces = Object.freeze({
  names: Object.freeze(["openshift"]),
  prefixes: Object.freeze(["kube-", "openshift-", "gke-", "eks-", "aws-", "aks-", "azure-"]),
});

/** The openbao target's configuration section (namespaces are read by the runtime). */
export interface OpenBaoTargetConfig {
  /** Reconcile fully, write nothing, report Drifted with what a real run would change. */
  observeOnly: boolean;
  concurrency: number;
  /**
   * Backstop resync of a settled cluster (default 10m): events wake it for everything watched, and
   * what falls due by the clock (certificate rotation, reminders) brings its pass forward
   * (resync.ts).
   */
  resyncMs: number;
  /** Re-check period while a cluster waits for pods, TLS or initialization. */
  pollMs: number;
  /** The cluster's DNS domain, for pod and Service names. */
  clusterDomain: string;
  /**
   * Image of executor Jobs (backup, restore): the operator's own image, which carries the `executor`
   * subcommand. spec.backup.image / OpenBaoRestore spec.image override it per object.
   */
  executorImage?: string;
  /**
   * How long a Job the target starts (backup, restore, pre-upgrade snapshot, validation hook) may
   * take for its pod to start (`jobStartTimeout`, default 5m). A pod that cannot start (image pull,
   * scheduling, a missing Secret) is reported at once; past this bound the operation fails, the Job
   * is ended and the operation lock released. Unset means the default (DEFAULT_JOB_START_TIMEOUT_MS).
   */
  jobStartTimeoutMs?: number;
  /**
   * The prefix of the admission policies and bindings the chart installed (admissionPolicies.enabled
   * renders `admissionPolicies: { prefix: <release>- }`); checked once at start. Unset: none installed.
   */
  admissionPolicyPrefix?: string;
  /**
   * OpenBaoTenant provisioning (`tenants: { enabled: true, serviceAccount: … }`); off by default, so
   * nothing changes for an install that creates no tenants. serviceAccount is the openbao process's
   * own, the subject of the RoleBindings a tenant's namespace gets; operatorNamespace defaults to
   * the namespace the process runs in. In tenant mode the OpenBaoClusters of every namespace are
   * watched, so one whose namespace no tenant onboards is told why it waits; clusterSelector (a
   * label selector) limits tenant mode to the clusters that carry it, wherever they are, for
   * several installs side by side.
   */
  tenants?: {
    serviceAccount: string;
    operatorNamespace?: string;
    clusterSelector?: string;
    /**
     * `namespacePodSecurityLabels: external` (upstream's tenancy.namespacePodSecurityLabels.mode): a
     * platform layer owns the tenant namespaces' Pod Security labels, so the provisioner never
     * writes the namespace. Recorded only when external (enforce is the default).
     */
    namespacePodSecurityLabels?: PodSecurityLabelMode;
    /**
     * `deniedNamespaces` / `deniedNamespacePrefixes` (upstream's
     * admissionPolicies.provisionerRBAC): namespaces never onboarded, besides the operator's own.
     * Recorded only when either is set; a list left out keeps upstream's default for it.
     */
    denied?: DeniedNamespaces;
  };
  /**
   * `openBaoAudience` (upstream's serviceAccountToken.openBaoAudience, default
   * DEFAULT_OPENBAO_AUDIENCE): the audience of the tokens the executor Jobs and the upgrade present
   * to OpenBao, and the bound audience of the OIDC bootstrap's roles. Always set after parsing.
   */
  openBaoAudience: string;
  /**
   * `gatewayAPI: false` (the chart's gatewayAPI.enabled: false, which grants no Gateway API RBAC):
   * the route kinds are never read, watched or written, even where they are served, and a cluster
   * asking for spec.gateway is told the operator runs without them. Only "off" is recorded.
   */
  gatewayAPI?: false;
  /**
   * `imageVerification: { trustedRootConfigMap: { namespace, name } }`: the ConfigMap whose
   * `trusted_root.json` (a Sigstore trusted root) keyless image signatures must chain to, upstream's
   * TrustedRootConfig. Unset: keyless verification is refused (no public Sigstore root is carried).
   */
  trustedRootConfigMap?: { namespace: string; name: string };
  /**
   * `operatorServiceAccount: <namespace>/<name>`: the ServiceAccount the operator is, for
   * selfInit.oidc's operator role, when it does not run in a pod (development, tests). In a pod its
   * own token says it and this is not needed.
   */
  operatorServiceAccount?: { namespace: string; name: string };
  /**
   * `platform: auto | kubernetes | openshift` (platform.ts): whether the OpenBao pods and the Jobs'
   * pods get the operator's uid, gid and fsGroup (kubernetes) or leave them to OpenShift's SCCs.
   * Unset is auto; the target's start replaces auto with what discovery found, so everything past
   * setup sees kubernetes or openshift.
   */
  platform?: PlatformSetting;
}

/** A settled cluster waits for events; this pass only catches what no watch sees. */
export const DEFAULT_RESYNC_MS = 10 * 60_000;

const KEYS = [
  "observeOnly",
  "concurrency",
  "resyncInterval",
  "pollInterval",
  "clusterDomain",
  "executorImage",
  "openBaoAudience",
  "jobStartTimeout",
  "admissionPolicies",
  "tenants",
  "gatewayAPI",
  "imageVerification",
  "operatorServiceAccount",
  "platform",
] as const;

export function parseOpenBaoConfig(raw: unknown, field: string): OpenBaoTargetConfig {
  const root = asSection(raw ?? {}, field, KEYS);
  const concurrency = root["concurrency"] ?? 2;
  if (
    typeof concurrency !== "number" ||
    !Number.isInteger(concurrency) ||
    concurrency < 1 ||
    concurrency > 32
  )
    throw new ConfigError(`${field}.concurrency`, "must be a whole number from 1 to 32");
  const clusterDomain = asString(root["clusterDomain"] ?? "cluster.local", `${field}.clusterDomain`);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(clusterDomain))
    throw new ConfigError(`${field}.clusterDomain`, "must be a DNS domain such as cluster.local");
  const observeOnly = asBool(root["observeOnly"] ?? false, `${field}.observeOnly`);
  const executorImage =
    root["executorImage"] === undefined
      ? undefined
      : asString(root["executorImage"], `${field}.executorImage`);
  if (executorImage !== undefined && !/^[^\s]+$/.test(executorImage))
    throw new ConfigError(`${field}.executorImage`, "must be an image reference without spaces");
  const openBaoAudience = asString(
    root["openBaoAudience"] ?? DEFAULT_OPENBAO_AUDIENCE,
    `${field}.openBaoAudience`,
  );
  if (!/^\S+$/.test(openBaoAudience))
    throw new ConfigError(`${field}.openBaoAudience`, "must be a token audience without spaces");
  const jobStartTimeoutMs =
    root["jobStartTimeout"] === undefined
      ? undefined
      : asDuration(root["jobStartTimeout"], `${field}.jobStartTimeout`);
  if (jobStartTimeoutMs !== undefined && jobStartTimeoutMs < 1000)
    throw new ConfigError(`${field}.jobStartTimeout`, "must be at least 1s (e.g. 5m)");
  const policies =
    root["admissionPolicies"] === undefined
      ? undefined
      : asSection(root["admissionPolicies"], `${field}.admissionPolicies`, ["prefix"] as const);
  const admissionPolicyPrefix =
    policies?.["prefix"] === undefined
      ? undefined
      : asString(policies["prefix"], `${field}.admissionPolicies.prefix`);
  const tenants = parseTenants(root["tenants"], `${field}.tenants`);
  const trustedRootConfigMap = parseTrustedRoot(root["imageVerification"], `${field}.imageVerification`);
  const operatorServiceAccount = parseServiceAccount(
    root["operatorServiceAccount"],
    `${field}.operatorServiceAccount`,
  );
  const platform = parsePlatform(root["platform"], `${field}.platform`);
  return {
    observeOnly,
    concurrency,
    openBaoAudience,
    resyncMs:
      root["resyncInterval"] === undefined
        ? DEFAULT_RESYNC_MS
        : asDuration(root["resyncInterval"], `${field}.resyncInterval`),
    pollMs:
      root["pollInterval"] === undefined ? 3_000 : asDuration(root["pollInterval"], `${field}.pollInterval`),
    clusterDomain,
    ...(executorImage ? { executorImage } : {}),
    ...(jobStartTimeoutMs !== undefined ? { jobStartTimeoutMs } : {}),
    ...(admissionPolicyPrefix !== undefined ? { admissionPolicyPrefix } : {}),
    ...(tenants ? { tenants } : {}),
    ...(asBool(root["gatewayAPI"] ?? true, `${field}.gatewayAPI`) ? {} : { gatewayAPI: false as const }),
    ...(trustedRootConfigMap ? { trustedRootConfigMap } : {}),
    ...(operatorServiceAccount ? { operatorServiceAccount } : {}),
    ...(platform !== "auto" ? { platform } : {}),
  };
}

function parsePlatform(raw: unknown, field: string): PlatformSetting {
  if (raw === undefined) return "auto";
  const value = asString(raw, field);
  if (!(PLATFORM_SETTINGS as readonly string[]).includes(value))
    throw new ConfigError(
      field,
      `must be one of ${PLATFORM_SETTINGS.join(", ")} (got ${JSON.stringify(value)})`,
    );
  return value as PlatformSetting;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SA_NAME = /^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

function parseServiceAccount(raw: unknown, field: string): OpenBaoTargetConfig["operatorServiceAccount"] {
  if (raw === undefined) return undefined;
  const [namespace, name, ...rest] = asString(raw, field).split("/");
  if (rest.length > 0 || !namespace || !name || !DNS_LABEL.test(namespace) || !SA_NAME.test(name))
    throw new ConfigError(field, "must be <namespace>/<name> of a ServiceAccount");
  return { namespace, name };
}

function parseTrustedRoot(raw: unknown, field: string): OpenBaoTargetConfig["trustedRootConfigMap"] {
  if (raw === undefined) return undefined;
  const section = asSection(raw, field, ["trustedRootConfigMap"] as const);
  if (section["trustedRootConfigMap"] === undefined) return undefined;
  const ref = asSection(section["trustedRootConfigMap"], `${field}.trustedRootConfigMap`, [
    "namespace",
    "name",
  ] as const);
  // Both, as upstream requires: a half-named root must not fall back to anything.
  const namespace = asString(ref["namespace"], `${field}.trustedRootConfigMap.namespace`);
  const name = asString(ref["name"], `${field}.trustedRootConfigMap.name`);
  return { namespace, name };
}

function parseTenants(raw: unknown, field: string): OpenBaoTargetConfig["tenants"] {
  if (raw === undefined) return undefined;
  const section = asSection(raw, field, [
    "enabled",
    "serviceAccount",
    "operatorNamespace",
    "clusterSelector",
    "namespacePodSecurityLabels",
    "deniedNamespaces",
    "deniedNamespacePrefixes",
  ] as const);
  if (!asBool(section["enabled"] ?? false, `${field}.enabled`)) return undefined;
  if (section["serviceAccount"] === undefined)
    throw new ConfigError(
      `${field}.serviceAccount`,
      "is required with enabled: true (the openbao process's ServiceAccount, bound in each tenant namespace)",
    );
  const serviceAccount = asString(section["serviceAccount"], `${field}.serviceAccount`);
  const operatorNamespace =
    section["operatorNamespace"] === undefined
      ? undefined
      : asString(section["operatorNamespace"], `${field}.operatorNamespace`);
  const clusterSelector =
    section["clusterSelector"] === undefined
      ? undefined
      : asString(section["clusterSelector"], `${field}.clusterSelector`);
  try {
    parseLabelSelector(clusterSelector);
  } catch (e) {
    throw new ConfigError(
      `${field}.clusterSelector`,
      `must be a label selector such as team=a: ${errorMessage(e)}`,
    );
  }
  const mode = section["namespacePodSecurityLabels"] ?? "enforce";
  if (mode !== "enforce" && mode !== "external")
    throw new ConfigError(
      `${field}.namespacePodSecurityLabels`,
      "must be enforce (the provisioner sets Pod Security restricted) or external (a platform layer owns the labels)",
    );
  const denied = parseDenied(section, field);
  return {
    serviceAccount,
    ...(operatorNamespace ? { operatorNamespace } : {}),
    ...(clusterSelector ? { clusterSelector } : {}),
    ...(mode === "external" ? { namespacePodSecurityLabels: mode } : {}),
    ...(denied ? { denied } : {}),
  };
}

const NAMESPACE_PREFIX = /^[a-z0-9][-a-z0-9]*$/;

function parseDenied(section: Record<string, unknown>, field: string): DeniedNamespaces | undefined {
  const rawNames = section["deniedNamespaces"];
  const rawPrefixes = section["deniedNamespacePrefixes"];
  if (rawNames === undefined && rawPrefixes === undefined) return undefined;
  const list = (raw: unknown, key: string, pattern: RegExp, what: string): string[] => {
    const items = asStringList(raw, `${field}.${key}`);
    items.forEach((v, i) => {
      if (!pattern.test(v) || v.length > 63)
        throw new ConfigError(`${field}.${key}[${i}]`, `must be ${what}`);
    });
    return items;
  };
  return {
    names:
      rawNames === undefined
        ? DEFAULT_DENIED_NAMESPACES.names
        : list(rawNames, "deniedNamespaces", DNS_LABEL, "a namespace name"),
    prefixes:
      rawPrefixes === undefined
        ? DEFAULT_DENIED_NAMESPACES.prefixes
        : list(
            rawPrefixes,
            "deniedNamespacePrefixes",
            NAMESPACE_PREFIX,
            "the start of a namespace name, such as kube-",
          ),
  };
}
