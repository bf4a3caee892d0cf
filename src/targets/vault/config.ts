import { readFileSync } from "node:fs";
import {
  asBool,
  asDuration,
  asObject,
  asSection,
  asString,
  rejectUnknownKeys,
} from "../../runtime/configvalues.js";
import { ConfigError } from "../../runtime/target.js";
import { type ApplicationScope, type ApplicationScopes, parsePrefix } from "./scope.js";

/**
 * The vault target's configuration section. The backend address and how to log in live only
 * here: no VaultSeed can point the controller at another endpoint or identity.
 */
export interface VaultTargetConfig {
  observeOnly: boolean;
  allowDelete: boolean;
  /** Reconciles in flight at once. */
  concurrency: number;
  /** Quiet resync period (10 minutes). */
  resyncMs: number;
  /** Application namespaces and their prefixes; every other watched namespace is a platform one. */
  applications: ApplicationScopes;
  backend: {
    address: string;
    caPem?: string;
    auth:
      | {
          kind: "kubernetes";
          mount: string;
          role: string;
          audience: string;
          tokenFile?: string;
          serviceAccount?: { namespace: string; name: string };
        }
      | { kind: "token"; token: string };
  };
}

// The keys each section knows; anything else is refused by name (see rejectUnknownKeys).
const SECTION_KEYS = [
  "observeOnly",
  "allowDelete",
  "concurrency",
  "resyncInterval",
  "applications",
  "backend",
] as const;
const APPLICATION_KEYS = ["write", "read"] as const;
const BACKEND_KEYS = ["address", "caFile", "allowHttp", "auth"] as const;
const AUTH_KEYS = ["kubernetes", "developmentToken"] as const;
const KUBERNETES_AUTH_KEYS = ["mount", "role", "audience", "tokenFile", "serviceAccount"] as const;

/** Kept under its old name for callers of the vault target. */
export const parseDuration = asDuration;

export function parseVaultConfig(raw: unknown, field: string): VaultTargetConfig {
  const root = asSection(raw ?? {}, field, SECTION_KEYS);
  const backend = asSection(root["backend"], `${field}.backend`, BACKEND_KEYS);
  const address = asString(backend["address"], `${field}.backend.address`);
  let protocol: string;
  try {
    protocol = new URL(address).protocol;
  } catch {
    protocol = "";
  }
  if (protocol !== "https:" && protocol !== "http:") {
    throw new ConfigError(`${field}.backend.address`, "must be an http(s) URL");
  }
  const allowHttp = asBool(backend["allowHttp"] ?? false, `${field}.backend.allowHttp`);
  if (protocol === "http:" && !allowHttp) {
    throw new ConfigError(
      `${field}.backend.address`,
      "http:// would send the login token and secret values unencrypted; use https://, or set backend.allowHttp: true (local development only)",
    );
  }
  let caPem: string | undefined;
  if (backend["caFile"] !== undefined) {
    const caFile = asString(backend["caFile"], `${field}.backend.caFile`);
    try {
      caPem = readFileSync(caFile, "utf8");
    } catch (e) {
      throw new ConfigError(`${field}.backend.caFile`, `cannot read ${caFile}: ${(e as Error).message}`);
    }
  }
  const concurrency = root["concurrency"] ?? 4;
  if (
    typeof concurrency !== "number" ||
    !Number.isInteger(concurrency) ||
    concurrency < 1 ||
    concurrency > 64
  ) {
    throw new ConfigError(`${field}.concurrency`, "must be a whole number from 1 to 64");
  }
  return {
    observeOnly: asBool(root["observeOnly"] ?? false, `${field}.observeOnly`),
    allowDelete: asBool(root["allowDelete"] ?? false, `${field}.allowDelete`),
    concurrency,
    resyncMs:
      root["resyncInterval"] === undefined
        ? 600_000
        : parseDuration(root["resyncInterval"], `${field}.resyncInterval`),
    applications: parseApplications(root["applications"], `${field}.applications`),
    backend: { address, caPem, auth: parseAuth(backend["auth"], `${field}.backend.auth`) },
  };
}

/**
 * `applications: {<namespace>: {write: [prefix...], read: [prefix...]}}`. The target watches these
 * namespaces on top of the section's namespaces (see target.ts).
 */
export function parseApplications(raw: unknown, field: string): ApplicationScopes {
  const out = new Map<string, ApplicationScope>();
  if (raw === undefined) return out;
  for (const [namespace, value] of Object.entries(asObject(raw, field))) {
    const at = `${field}.${namespace}`;
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
      throw new ConfigError(at, "is not a namespace name (lowercase letters, digits and -, at most 63)");
    const section = asSection(value, at, APPLICATION_KEYS);
    const write = prefixList(section["write"], `${at}.write`);
    if (write.length === 0)
      throw new ConfigError(
        `${at}.write`,
        "name at least one prefix the namespace may seed, e.g. apps/<namespace>/",
      );
    const read = section["read"] === undefined ? [] : prefixList(section["read"], `${at}.read`);
    out.set(namespace, { write, read: [...write, ...read] });
  }
  return out;
}

function prefixList(raw: unknown, field: string): string[][] {
  if (!Array.isArray(raw))
    throw new ConfigError(field, "must be a list of path prefixes, e.g. [apps/team-a/]");
  return raw.map((item, i) => {
    const parsed = parsePrefix(asString(item, `${field}[${i}]`));
    if ("problem" in parsed) throw new ConfigError(`${field}[${i}]`, parsed.problem);
    return parsed.segments;
  });
}

function parseAuth(raw: unknown, field: string): VaultTargetConfig["backend"]["auth"] {
  const auth = asObject(raw, field);
  // A static token never expires and is not tied to the workload: allowed only under a key that
  // says it is for development, so it cannot reach production by accident.
  if (auth["token"] !== undefined) {
    throw new ConfigError(
      `${field}.token`,
      "static-token auth is for development only; use kubernetes, or name the key developmentToken to mark it as development use",
    );
  }
  rejectUnknownKeys(auth, AUTH_KEYS, field);
  if (auth["developmentToken"] !== undefined && auth["kubernetes"] !== undefined) {
    throw new ConfigError(field, "set either kubernetes or developmentToken, not both");
  }
  if (auth["developmentToken"] !== undefined) {
    return { kind: "token", token: asString(auth["developmentToken"], `${field}.developmentToken`) };
  }
  const k = asSection(auth["kubernetes"], `${field}.kubernetes`, KUBERNETES_AUTH_KEYS);
  const out: VaultTargetConfig["backend"]["auth"] = {
    kind: "kubernetes",
    mount: asString(k["mount"] ?? "kubernetes", `${field}.kubernetes.mount`),
    role: asString(k["role"], `${field}.kubernetes.role`),
    audience: asString(k["audience"] ?? "vault", `${field}.kubernetes.audience`),
  };
  if (k["tokenFile"] !== undefined && k["serviceAccount"] !== undefined) {
    throw new ConfigError(`${field}.kubernetes`, "set either tokenFile or serviceAccount, not both");
  }
  if (k["tokenFile"] !== undefined) out.tokenFile = asString(k["tokenFile"], `${field}.kubernetes.tokenFile`);
  else if (k["serviceAccount"] !== undefined) {
    const sa = asSection(k["serviceAccount"], `${field}.kubernetes.serviceAccount`, ["namespace", "name"]);
    out.serviceAccount = {
      namespace: asString(sa["namespace"], `${field}.kubernetes.serviceAccount.namespace`),
      name: asString(sa["name"], `${field}.kubernetes.serviceAccount.name`),
    };
  } else {
    throw new ConfigError(
      `${field}.kubernetes`,
      "set tokenFile (a projected token with the audience) or serviceAccount (TokenRequest)",
    );
  }
  return out;
}
