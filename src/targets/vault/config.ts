import { readFileSync } from "node:fs";
import { asBool, asObject, asString } from "../../runtime/configvalues.js";
import { ConfigError } from "../../runtime/target.js";

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

const DURATION = /^(\d+)(ms|s|m|h)$/;

export function parseDuration(v: unknown, field: string): number {
  const m = typeof v === "string" ? DURATION.exec(v) : null;
  if (!m) throw new ConfigError(field, 'must be a duration such as "30s", "10m" or "1h"');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
  return Number(m[1]) * unit;
}

export function parseVaultConfig(raw: unknown, field: string): VaultTargetConfig {
  const root = asObject(raw ?? {}, field);
  const backend = asObject(root["backend"], `${field}.backend`);
  const address = asString(backend["address"], `${field}.backend.address`);
  try {
    const u = new URL(address);
    if (u.protocol !== "https:" && u.protocol !== "http:") throw new Error();
  } catch {
    throw new ConfigError(`${field}.backend.address`, "must be an http(s) URL");
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
    backend: { address, caPem, auth: parseAuth(backend["auth"], `${field}.backend.auth`) },
  };
}

function parseAuth(raw: unknown, field: string): VaultTargetConfig["backend"]["auth"] {
  const auth = asObject(raw, field);
  if (auth["token"] !== undefined && auth["kubernetes"] !== undefined) {
    throw new ConfigError(field, "set either kubernetes or token, not both");
  }
  if (auth["token"] !== undefined) {
    return { kind: "token", token: asString(auth["token"], `${field}.token`) };
  }
  const k = asObject(auth["kubernetes"], `${field}.kubernetes`);
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
    const sa = asObject(k["serviceAccount"], `${field}.kubernetes.serviceAccount`);
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
