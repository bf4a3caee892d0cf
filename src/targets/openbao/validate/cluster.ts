/**
 * Offline checks of one OpenBaoCluster spec: what the CRD cannot say (a tag that contradicts the
 * version, a size of zero, TLS mode settings that belong together, a seal type without its block,
 * self-init requests that would escape their path), and what a manifest that never met the API
 * server may still get wrong. Pure: (metadata name, spec) in, field problems out.
 */
import { kmsSealParts } from "../normalise.js";
import { inlineCredentials } from "../workload/config/secret-config.js";
import type { SpecView } from "../workload/config/spec-view.js";
import { clusterCredentialRefs, credentialNamespaceProblems } from "./credentials.js";
import type { FieldProblem } from "./field-problem.js";
import { imageProblem } from "./image.js";
import { checkMetrics, checkNetwork } from "./network.js";
import { checkRenderedRules } from "./rendered.js";
import { isDuration, isHostName, isObjectName, parseQuantity, parseVersion } from "./values.js";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const has = (o: Obj, key: string): boolean =>
  Object.hasOwn(o, key) && o[key] !== undefined && o[key] !== null;

/** The seal types and the block each one is configured by (static needs none). */
export const SEAL_BLOCKS: Readonly<Record<string, string | undefined>> = {
  static: undefined,
  transit: "transit",
  awskms: "awskms",
  gcpckms: "gcpCloudKMS",
  azurekeyvault: "azureKeyVault",
  kmip: "kmip",
  ocikms: "ocikms",
  pkcs11: "pkcs11",
  kms: "kms",
};

/** Settings each seal block cannot do without, as upstream's schema requires them. */
const SEAL_REQUIRED: Readonly<Record<string, readonly string[]>> = {
  transit: ["address", "mountPath", "keyName"],
  awskms: ["region", "kmsKeyID"],
  gcpCloudKMS: ["project", "region", "keyRing", "cryptoKey"],
  azureKeyVault: ["vaultName", "keyName"],
  // Upstream 0.5's name, or the earlier one (a|b: either).
  kmip: ["endpoint|address"],
  ocikms: ["keyID", "cryptoEndpoint", "managementEndpoint"],
  pkcs11: ["lib", "keyLabel"],
};

export const SELF_INIT_OPERATIONS = ["create", "read", "update", "delete", "list", "patch"] as const;
const REQUEST_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `namespace`: where the object lives, when known (a manifest checked offline may not say). */
/** `runningVersion`: the cluster's status.currentVersion where known, for rules about the running release. */
export function checkClusterSpec(
  name: string | undefined,
  spec: unknown,
  namespace?: string,
  runningVersion?: string,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const add = (field: string, message: string) => problems.push({ field, message });
  if (!isObject(spec)) {
    add("spec", "is missing or not an object");
    return problems;
  }
  const version = checkVersion(spec, add);
  checkImages(spec, version, add);
  checkStorage(spec, add);
  checkTls(name, spec, add);
  checkSeal(spec, add);
  checkInlineCredentials(spec, add);
  checkSelfInit(spec, add);
  checkUpgrade(spec, add);
  checkNetwork(spec, add);
  checkMetrics(spec, add);
  checkRenderedRules(spec, add, runningVersion);
  problems.push(...credentialNamespaceProblems(clusterCredentialRefs(spec), namespace));
  return problems;
}

type Add = (field: string, message: string) => void;

function checkVersion(spec: Obj, add: Add): string | undefined {
  const v = spec["version"];
  if (!has(spec, "version")) add("spec.version", "is required");
  else if (typeof v !== "string") add("spec.version", "must be a string such as 2.4.1");
  else if (parseVersion(v) === undefined)
    add("spec.version", `"${v}" is not a semantic version such as 2.4.1`);
  else return v;
  return undefined;
}

function checkImages(spec: Obj, version: string | undefined, add: Add): void {
  const image = (value: unknown, field: string, against?: string) => {
    if (value === undefined || value === null) return;
    if (typeof value !== "string") {
      add(field, "must be a string");
      return;
    }
    const problem = imageProblem(value, against);
    if (problem) add(field, problem);
  };
  // Only the server image must agree with the version; the others are tools of their own versions.
  image(spec["image"], "spec.image", version);
  const at = (o: unknown, ...keys: string[]): unknown =>
    keys.reduce<unknown>((x, k) => (isObject(x) ? x[k] : undefined), o);
  image(at(spec, "backup", "image"), "spec.backup.image");
  image(at(spec, "upgrade", "image"), "spec.upgrade.image");
  image(at(spec, "initContainer", "image"), "spec.initContainer.image");
  image(
    at(spec, "upgrade", "blueGreen", "verification", "prePromotionHook", "image"),
    "spec.upgrade.blueGreen.verification.prePromotionHook.image",
  );
  const plugins = spec["plugins"];
  if (Array.isArray(plugins))
    for (const [i, p] of plugins.entries()) image(at(p, "image"), `spec.plugins[${i}].image`);
}

/** Blue-green settings a Job or the planner would otherwise meet only mid-upgrade. */
function checkUpgrade(spec: Obj, add: Add): void {
  const bg =
    isObject(spec["upgrade"]) && isObject(spec["upgrade"]["blueGreen"])
      ? spec["upgrade"]["blueGreen"]
      : undefined;
  const v = bg && isObject(bg["verification"]) ? bg["verification"] : undefined;
  if (!v) return;
  const base = "spec.upgrade.blueGreen.verification";
  const minSync = v["minSyncDuration"];
  // Go's units only: the planner reads it as OpenBao reads its own durations (no days).
  if (minSync !== undefined && (typeof minSync !== "string" || !isDuration(minSync) || minSync.includes("d")))
    add(`${base}.minSyncDuration`, 'must be a duration in ns, us, ms, s, m or h, such as "30s" or "5m"');
  const hook = v["prePromotionHook"];
  const timeout = isObject(hook) ? hook["timeoutSeconds"] : undefined;
  if (timeout !== undefined && (typeof timeout !== "number" || !Number.isInteger(timeout) || timeout < 1))
    add(`${base}.prePromotionHook.timeoutSeconds`, "must be a whole number of seconds, at least 1");
}

function checkSize(value: unknown, field: string, add: Add, required: boolean): void {
  if (value === undefined || value === null) {
    if (required) add(field, "is required");
    return;
  }
  if (typeof value !== "string") {
    add(field, "must be a quantity such as 10Gi, as a string");
    return;
  }
  const bytes = parseQuantity(value);
  if (bytes === undefined) add(field, `"${value}" is not a quantity such as 10Gi`);
  else if (!(bytes >= 1)) add(field, `"${value}" must be a positive size (at least one byte)`);
}

function checkStorage(spec: Obj, add: Add): void {
  const storage = spec["storage"];
  if (!isObject(storage)) {
    add("spec.storage", "is required: an object with size");
    return;
  }
  checkSize(storage["size"], "spec.storage.size", add, true);
  const rr = spec["readReplicas"];
  if (isObject(rr) && isObject(rr["storage"]))
    checkSize(rr["storage"]["size"], "spec.readReplicas.storage.size", add, false);
}

function checkTls(name: string | undefined, spec: Obj, add: Add): void {
  const tls = spec["tls"] ?? {};
  if (!isObject(tls)) {
    add("spec.tls", "must be an object");
    return;
  }
  const mode = tls["mode"] ?? "OperatorManaged";
  if (tls["enabled"] === false) return; // plain HTTP: the mode's settings are not used
  if (mode === "OperatorManaged") {
    const period = tls["rotationPeriod"];
    if (period !== undefined && (typeof period !== "string" || !isDuration(period)))
      add("spec.tls.rotationPeriod", "must be a duration such as 720h");
  } else if (mode === "External") {
    // The operator reads the certificates from these Secrets (named after the cluster unless set).
    for (const [key, suffix] of [
      ["caSecretName", "tls-ca"],
      ["serverSecretName", "tls-server"],
    ] as const) {
      const given = tls[key];
      const field = `spec.tls.${key}`;
      if (given !== undefined && typeof given !== "string") add(field, "must be a Secret name");
      else if (typeof given === "string") {
        if (!isObjectName(given)) add(field, `"${given}" is not a valid Secret name`);
      } else if (name === undefined)
        add(field, `is required when metadata.name is missing (the default is <name>-${suffix})`);
      else if (!isObjectName(`${name}-${suffix}`))
        add(field, `is required: the default Secret name ${name}-${suffix} is not a valid name`);
    }
  } else if (mode === "ACME") {
    checkAcme(tls["acme"], add);
  } else {
    add("spec.tls.mode", `"${String(mode)}" is not one of OperatorManaged, External, ACME`);
  }
  if (mode !== "ACME" && has(tls, "acme")) add("spec.tls.acme", "belongs to tls.mode ACME only");
}

function checkAcme(acme: unknown, add: Add): void {
  if (!isObject(acme)) {
    add("spec.tls.acme", "is required with tls.mode ACME");
    return;
  }
  const url = acme["directoryURL"];
  if (typeof url !== "string" || url === "")
    add("spec.tls.acme.directoryURL", "is required with tls.mode ACME");
  else if (!/^https?:\/\/[^\s/]+/.test(url))
    add("spec.tls.acme.directoryURL", `"${url}" is not an http(s) URL`);
  const domain = acme["domain"];
  const domains = acme["domains"];
  const list = Array.isArray(domains) ? domains : [];
  if (has(acme, "domain") && list.length > 0) add("spec.tls.acme", "set domain or domains, not both");
  // Neither domain nor domains: upstream's default, `<name>-acme.<ns>.svc` (the ACME Service).
  if (has(acme, "domain") && (typeof domain !== "string" || !isHostName(domain)))
    add("spec.tls.acme.domain", `${JSON.stringify(domain)} is not a DNS name`);
  if (domains !== undefined && !Array.isArray(domains))
    add("spec.tls.acme.domains", "must be a list of DNS names");
  for (const [i, d] of list.entries())
    if (typeof d !== "string" || !isHostName(d))
      add(`spec.tls.acme.domains[${i}]`, `${JSON.stringify(d)} is not a DNS name`);
}

/**
 * Anyone who may read the cluster object reads a credential written into its spec: the Hardened
 * profile takes credentials only from Secrets (elsewhere they are a SecurityRisk condition).
 */
function checkInlineCredentials(spec: Obj, add: Add): void {
  if (spec["profile"] !== "Hardened") return;
  for (const field of inlineCredentials(spec as SpecView))
    add(
      `spec.${field}`,
      field.startsWith("plugins[")
        ? "is a credential written into the spec, which the Hardened profile refuses: configure the plugin's credential through its config endpoint with a self-init request (kept in a Secret)"
        : "is a credential written into the spec, which the Hardened profile refuses: put it in the Secret named by spec.unseal.credentialsSecretRef",
    );
}

function checkSeal(spec: Obj, add: Add): void {
  const unseal = spec["unseal"];
  if (unseal === undefined || unseal === null) return;
  if (!isObject(unseal)) {
    add("spec.unseal", "must be an object");
    return;
  }
  const type = unseal["type"] ?? "static";
  if (typeof type !== "string" || !Object.hasOwn(SEAL_BLOCKS, type)) {
    add("spec.unseal.type", `${JSON.stringify(type)} is not one of ${Object.keys(SEAL_BLOCKS).join(", ")}`);
    return;
  }
  const own = SEAL_BLOCKS[type];
  if (own !== undefined && !has(unseal, own))
    add(`spec.unseal.${own}`, `is required with unseal.type ${type}`);
  if (type !== "static" && has(unseal, "static"))
    add("spec.unseal.static", "belongs to unseal.type static only");
  for (const [otherType, block] of Object.entries(SEAL_BLOCKS)) {
    if (block === undefined || otherType === type || !has(unseal, block)) continue;
    add(`spec.unseal.${block}`, `belongs to unseal.type ${otherType}, but unseal.type is ${type}`);
  }
  if (own !== undefined && has(unseal, own)) {
    const settings = unseal[own];
    if (!isObject(settings)) {
      add(`spec.unseal.${own}`, "must be an object");
      return;
    }
    for (const keys of SEAL_REQUIRED[own] ?? []) {
      const present = keys
        .split("|")
        .some((key) => typeof settings[key] === "string" && settings[key] !== "");
      if (!present) add(`spec.unseal.${own}.${keys.split("|")[0]}`, `is required for the ${type} seal`);
    }
    if (type === "kms") checkKmsPlugin(spec, settings, add);
  }
}

/**
 * A KMS seal is served by a plugin OpenBao must have at start: one not declared in spec.plugins (type
 * kms, the same name) leaves the server unable to unseal, crash-looping.
 */
function checkKmsPlugin(spec: Obj, kms: Obj, add: Add): void {
  const { name, nameField } = kmsSealParts(kms);
  const field = `spec.unseal.kms.${nameField}`;
  if (typeof name !== "string" || name === "") {
    add(field, "is required: the name of the KMS plugin that serves the seal");
    return;
  }
  const plugins = Array.isArray(spec["plugins"]) ? spec["plugins"] : [];
  const declared = plugins.some((p) => isObject(p) && p["type"] === "kms" && p["name"] === name);
  if (!declared)
    add(
      field,
      `names KMS plugin ${JSON.stringify(name)}, which spec.plugins does not declare (add a plugin with type kms and name ${JSON.stringify(name)})`,
    );
}

function checkSelfInit(spec: Obj, add: Add): void {
  const selfInit = spec["selfInit"];
  if (selfInit === undefined || selfInit === null) return;
  if (!isObject(selfInit)) {
    add("spec.selfInit", "must be an object");
    return;
  }
  checkOidc(selfInit, add);
  const requests = selfInit["requests"];
  if (requests === undefined || requests === null) return;
  if (!Array.isArray(requests)) {
    add("spec.selfInit.requests", "must be a list");
    return;
  }
  if (requests.length > 0 && selfInit["enabled"] !== true)
    add("spec.selfInit.enabled", "must be true for the requests to run (they are ignored otherwise)");
  const seen = new Map<string, number>();
  for (const [i, request] of requests.entries()) {
    const at = `spec.selfInit.requests[${i}]`;
    if (!isObject(request)) {
      add(at, "must be an object");
      continue;
    }
    const rname = request["name"];
    if (typeof rname !== "string" || !REQUEST_NAME.test(rname) || rname.length > 64)
      add(
        `${at}.name`,
        `${JSON.stringify(rname)} must start with a letter or _ and hold only letters, digits, _ and - (at most 64)`,
      );
    else if (seen.has(rname))
      add(`${at}.name`, `"${rname}" is also the name of requests[${seen.get(rname)}]`);
    else seen.set(rname, i);
    const op = request["operation"];
    if (typeof op !== "string" || !(SELF_INIT_OPERATIONS as readonly string[]).includes(op))
      add(`${at}.operation`, `${JSON.stringify(op)} is not one of ${SELF_INIT_OPERATIONS.join(", ")}`);
    const path = request["path"];
    const pathProblem = requestPathProblem(path);
    if (pathProblem) add(`${at}.path`, pathProblem);
    if (has(request, "data") && !isObject(request["data"]))
      add(`${at}.data`, "must be an object (the request body), not a list or a single value");
  }
}

const SERVICE_ACCOUNT_SUBJECT =
  /^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

/** selfInit.oidc: subjects OpenBao can match exactly, and no request enabling the mount it enables. */
function checkOidc(selfInit: Obj, add: Add): void {
  const oidc = selfInit["oidc"];
  if (!isObject(oidc) || oidc["enabled"] !== true) return;
  const extra = oidc["additionalSubjects"];
  if (isObject(extra))
    for (const [who, list] of Object.entries(extra)) {
      if (!Array.isArray(list)) continue;
      list.forEach((s, i) => {
        if (typeof s !== "string" || !SERVICE_ACCOUNT_SUBJECT.test(s))
          add(
            `spec.selfInit.oidc.additionalSubjects.${who}[${i}]`,
            `${JSON.stringify(s)} must be system:serviceaccount:<namespace>:<name>`,
          );
      });
    }
  const requests = selfInit["requests"];
  if (selfInit["enabled"] === true && Array.isArray(requests))
    requests.forEach((r, i) => {
      if (
        isObject(r) &&
        typeof r["path"] === "string" &&
        r["path"].replace(/\/+$/, "") === "sys/auth/jwt-operator"
      )
        add(
          `spec.selfInit.requests[${i}].path`,
          "sys/auth/jwt-operator is enabled by spec.selfInit.oidc already; OpenBao would refuse to enable it twice and stop initializing",
        );
    });
}

/** Why a self-init request path is not a relative API path inside OpenBao; undefined when it is. */
export function requestPathProblem(path: unknown): string | undefined {
  if (typeof path !== "string" || path === "") return "is required: an API path such as sys/auth/kubernetes";
  if (path.startsWith("/")) return `"${path}" must not start with / (it is relative to /v1/)`;
  if ([...path].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f || /\s/.test(c)))
    return `${JSON.stringify(path)} must not contain spaces or control characters`;
  // Percent-encoded dots are dots to the server that decodes them, and a backslash a separator to some.
  if (path.includes("\\")) return `"${path}" must not contain a backslash`;
  if (path.split("/").some((segment) => [".", ".."].includes(decoded(segment))))
    return `"${path}" must not contain . or .. segments`;
  if (/[?#]/.test(path)) return `"${path}" must not carry a query or fragment`;
  return undefined;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
