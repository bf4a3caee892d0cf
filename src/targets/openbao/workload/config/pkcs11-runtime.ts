/**
 * `unseal.pkcs11.runtime`: what a vendor's PKCS#11 library needs in the pod, as upstream 0.5 wires
 * it. `libraryPath` becomes LD_LIBRARY_PATH; each `env` entry a variable from a key of
 * `unseal.credentialsSecretRef`; each `fileEnv` entry a variable holding the path of that key,
 * mounted as a file under the credentials directory (only those keys are mounted). None of it is
 * an OpenBao setting, so none of it goes into the seal stanza.
 */
import { ConfigError } from "./errors.js";
import type { SpecView } from "./spec-view.js";
import { isObject } from "./values.js";

export interface Pkcs11Mapping {
  kind: "env" | "fileEnv";
  /** The variable's name. */
  name: string;
  /** The key of the credentials Secret it comes from. */
  secretKey: string;
}

export interface Pkcs11Runtime {
  libraryPath?: string;
  mappings: Pkcs11Mapping[];
}

/**
 * Variables the operator sets for the seal or the pod: a mapping may not replace them (upstream
 * reserves the same PKCS#11 and loader names; the rest are this operator's container variables).
 */
const RESERVED = new Set([
  "BAO_SEAL_TYPE",
  "BAO_HSM_LIB",
  "BAO_HSM_SLOT",
  "BAO_HSM_TOKEN_LABEL",
  "BAO_HSM_PIN",
  "BAO_HSM_KEY_LABEL",
  "BAO_HSM_DEFAULT_KEY_LABEL",
  "BAO_HSM_KEY_ID",
  "BAO_HSM_MECHANISM",
  "BAO_HSM_RSA_OAEP_HASH",
  "LD_LIBRARY_PATH",
  "BAO_ADDR",
  "BAO_CACERT",
]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SECRET_KEY = /^[-._A-Za-z0-9]+$/;

/** Undefined unless the seal is pkcs11 with a runtime block; throws ConfigError naming the entry. */
export function pkcs11Runtime(spec: SpecView): Pkcs11Runtime | undefined {
  if (spec.unseal?.type !== "pkcs11") return undefined;
  const block = spec.unseal["pkcs11"];
  const raw = isObject(block) ? block["runtime"] : undefined;
  if (raw === undefined) return undefined;
  const field = "unseal.pkcs11.runtime";
  if (!isObject(raw)) throw new ConfigError(field, "must be an object");
  const libraryPath = raw["libraryPath"];
  if (libraryPath !== undefined && (typeof libraryPath !== "string" || !libraryPath.startsWith("/")))
    throw new ConfigError(`${field}.libraryPath`, "must be an absolute path");
  const mappings: Pkcs11Mapping[] = [];
  const seen = new Map<string, string>();
  for (const kind of ["env", "fileEnv"] as const) {
    const list = raw[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new ConfigError(`${field}.${kind}`, "must be a list");
    list.forEach((entry: unknown, i) => {
      const at = `${field}.${kind}[${i}]`;
      if (!isObject(entry)) throw new ConfigError(at, "must be an object");
      const { name, secretKey } = entry;
      if (typeof name !== "string" || !ENV_NAME.test(name))
        throw new ConfigError(`${at}.name`, "must be a variable name (^[A-Za-z_][A-Za-z0-9_]*$)");
      if (RESERVED.has(name))
        throw new ConfigError(`${at}.name`, `${name} is set by the operator and cannot be mapped`);
      const first = seen.get(name);
      if (first) throw new ConfigError(`${at}.name`, `${name} is already mapped by ${first}`);
      seen.set(name, at);
      if (typeof secretKey !== "string" || !SECRET_KEY.test(secretKey))
        throw new ConfigError(`${at}.secretKey`, "must be a Secret key (letters, digits, -, _ and .)");
      mappings.push({ kind, name, secretKey });
    });
  }
  const ref = spec.unseal["credentialsSecretRef"];
  const refName = isObject(ref) && typeof ref["name"] === "string" ? ref["name"].trim() : "";
  if (mappings.length > 0 && refName === "")
    throw new ConfigError(
      "unseal.credentialsSecretRef",
      "is required by unseal.pkcs11.runtime.env and fileEnv (their keys come from it)",
    );
  return { ...(typeof libraryPath === "string" ? { libraryPath } : {}), mappings };
}
