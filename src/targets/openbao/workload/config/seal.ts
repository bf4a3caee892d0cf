/**
 * The seal stanza. The default is the operator-managed static key (a file mounted from the
 * unseal-key Secret), which auto-unseals every pod without an outside service. Other seal types are
 * rendered from their spec blocks with OpenBao's own setting names.
 *
 * Credentials never go into the rendered file when OpenBao can read them from its environment:
 * those given inline in the spec are left out of the stanza and handed to the pods as environment
 * variables from a Secret the operator writes (see {@link sealCredentialEnv}). Only a KMS plugin's
 * settings have no known variables; a plugin seal with a credential-like setting keeps it in the
 * file, and the whole file is then kept in a Secret ({@link sealKeepsCredentialInFile}).
 */
import { isSecretField } from "../../../../runtime/log.js";
import { collate } from "../../../../runtime/text-order.js";
import { kmsSealParts } from "../../normalise.js";
import { ConfigError } from "./errors.js";
import { attrs, block, type HclBlock } from "./hcl.js";
import { type ConfigPaths, DEFAULT_STATIC_KEY_ID } from "./options.js";
import { pkcs11Runtime } from "./pkcs11-runtime.js";
import type { SpecView } from "./spec-view.js";
import { isObject, mapSettings, record } from "./values.js";

interface SealType {
  /** Spec field holding the block (upstream's names). */
  specField: string;
  /** Upstream camelCase name → OpenBao name; null: OpenBao has no such setting. */
  names: Record<string, string | null>;
  /**
   * Settings that carry secret values when given inline (OpenBao names), each with the environment
   * variable OpenBao's seal reads it from when the stanza leaves it out (OpenBao's seal docs).
   */
  secrets: Record<string, string>;
  /**
   * Variables read from a user's `unseal.credentialsSecretRef` Secret, each from the key of the same
   * name and optional, as the upstream operator wires them (the transit token comes from key `token`).
   */
  refEnv: Record<string, string>;
}

const HEALTH = {
  healthCheckEnabled: "health_check_enabled",
  healthCheckTimeout: "health_check_timeout",
  healthCheckInterval: "health_check_interval",
  healthCheckIntervalUnhealthy: "health_check_interval_unhealthy",
  disabled: "disabled",
};

export const SEAL_TYPES: Record<string, SealType> = {
  transit: {
    specField: "transit",
    names: {
      address: "address",
      token: "token",
      keyName: "key_name",
      mountPath: "mount_path",
      namespace: "namespace",
      disableRenewal: "disable_renewal",
      tlsCACert: "tls_ca_cert",
      tlsClientCert: "tls_client_cert",
      tlsClientKey: "tls_client_key",
      tlsServerName: "tls_server_name",
      tlsSkipVerify: "tls_skip_verify",
      ...HEALTH,
    },
    secrets: { token: "VAULT_TOKEN" },
    refEnv: { VAULT_TOKEN: "token" },
  },
  awskms: {
    specField: "awskms",
    names: {
      region: "region",
      accessKey: "access_key",
      secretKey: "secret_key",
      sessionToken: "session_token",
      kmsKeyID: "kms_key_id",
      endpoint: "endpoint",
      ...HEALTH,
    },
    secrets: {
      access_key: "AWS_ACCESS_KEY_ID",
      secret_key: "AWS_SECRET_ACCESS_KEY",
      session_token: "AWS_SESSION_TOKEN",
    },
    refEnv: {
      AWS_ACCESS_KEY_ID: "AWS_ACCESS_KEY_ID",
      AWS_SECRET_ACCESS_KEY: "AWS_SECRET_ACCESS_KEY",
      AWS_SESSION_TOKEN: "AWS_SESSION_TOKEN",
    },
  },
  gcpckms: {
    specField: "gcpCloudKMS",
    names: {
      credentials: "credentials",
      project: "project",
      region: "region",
      keyRing: "key_ring",
      cryptoKey: "crypto_key",
      ...HEALTH,
    },
    secrets: {},
    refEnv: {},
  },
  azurekeyvault: {
    specField: "azureKeyVault",
    names: {
      tenantID: "tenant_id",
      clientID: "client_id",
      clientSecret: "client_secret",
      environment: "environment",
      vaultName: "vault_name",
      keyName: "key_name",
      resource: "resource",
      ...HEALTH,
    },
    secrets: { client_secret: "AZURE_CLIENT_SECRET" },
    refEnv: {
      AZURE_TENANT_ID: "AZURE_TENANT_ID",
      AZURE_CLIENT_ID: "AZURE_CLIENT_ID",
      AZURE_CLIENT_SECRET: "AZURE_CLIENT_SECRET",
      AZURE_ENVIRONMENT: "AZURE_ENVIRONMENT",
      AZURE_AD_RESOURCE: "AZURE_AD_RESOURCE",
    },
  },
  kmip: {
    specField: "kmip",
    names: {
      // Upstream 0.5's names, and the earlier ones (address, certificate, key, tlsServerName).
      endpoint: "endpoint",
      clientCert: "client_cert",
      clientKey: "client_key",
      serverName: "server_name",
      address: "endpoint",
      certificate: "client_cert",
      key: "client_key",
      caCert: "ca_cert",
      tlsServerName: "server_name",
      tlsSkipVerify: null,
      kmsKeyID: "kms_key_id",
      timeout: "timeout",
      encryptAlg: "encrypt_alg",
      tls12Ciphers: "tls12_ciphers",
      ...HEALTH,
    },
    secrets: {},
    refEnv: {},
  },
  ocikms: {
    specField: "ocikms",
    names: {
      keyID: "key_id",
      cryptoEndpoint: "crypto_endpoint",
      managementEndpoint: "management_endpoint",
      authTypeAPIKey: "auth_type_api_key",
      // authType is translated below; a compartment is implied by the key in OpenBao.
      compartmentID: null,
      ...HEALTH,
    },
    secrets: {},
    refEnv: {},
  },
  pkcs11: {
    specField: "pkcs11",
    names: {
      lib: "lib",
      slot: "slot",
      tokenLabel: "token_label",
      pin: "pin",
      keyLabel: "key_label",
      keyID: "key_id",
      mechanism: "mechanism",
      rsaOAEPHash: "rsa_oaep_hash",
      disableSoftwareEncryption: "disable_software_encryption",
      generateKey: null,
      hmacKeyLabel: null,
      rsaEncryptLocal: null,
      ...HEALTH,
    },
    secrets: { pin: "BAO_HSM_PIN" },
    refEnv: { BAO_HSM_PIN: "BAO_HSM_PIN" },
  },
};

export function sealType(spec: SpecView): string {
  return spec.unseal?.type ?? "static";
}

export function renderSeal(spec: SpecView, paths: ConfigPaths): HclBlock {
  const type = sealType(spec);
  if (type === "static") {
    const own = spec.unseal?.static ?? {};
    return block(
      "seal",
      ["static"],
      attrs(
        {
          current_key_id: own.currentKeyID ?? DEFAULT_STATIC_KEY_ID,
          current_key: own.currentKey ?? `file://${paths.staticSealKeyFile}`,
        },
        "unseal.static",
      ),
    );
  }
  if (type === "kms") return renderPluginSeal(spec);
  const def = Object.hasOwn(SEAL_TYPES, type) ? SEAL_TYPES[type] : undefined;
  if (!def) throw new ConfigError("unseal.type", `${JSON.stringify(type)} is not a known seal type`);
  const raw = spec.unseal?.[def.specField];
  if (!isObject(raw)) throw new ConfigError(`unseal.${def.specField}`, `is required for unseal.type ${type}`);
  const given = { ...raw };
  const extra: Record<string, boolean> = {};
  if (type === "ocikms" && given["authType"] !== undefined) {
    // Upstream names the mode; OpenBao has one switch for API-key auth (instance principal otherwise).
    const mode = String(given["authType"])
      .toLowerCase()
      .replace(/[^a-z]/g, "");
    if (mode !== "apikey" && mode !== "instanceprincipal")
      throw new ConfigError(`unseal.${def.specField}.authType`, "must be apikey or instanceprincipal");
    extra["auth_type_api_key"] = mode === "apikey";
    delete given["authType"];
  }
  if (type === "pkcs11") {
    // Pod wiring for the library, not an OpenBao setting: checked here, wired by the workload.
    pkcs11Runtime(spec);
    delete given["runtime"];
  }
  const settings = mapSettings(given, `unseal.${def.specField}`, def.names, `OpenBao's ${type} seal`);
  // Credentials reach OpenBao through its environment (sealCredentialEnv), never through the file.
  for (const name of Object.keys(def.secrets)) delete settings[name];
  return block("seal", [type], attrs({ ...settings, ...extra }, `unseal.${def.specField}`));
}

/**
 * A seal served by a KMS plugin (OpenBao 2.6+): upstream 0.5's `unseal.kms.pluginName` (or the
 * earlier `unseal.kms.name`) names the plugin (declared in spec.plugins with type kms) and the seal
 * stanza; `unseal.kms.config` (or, earlier, the other keys) holds the plugin's own settings, which
 * must be written as OpenBao-style identifiers.
 */
function renderPluginSeal(spec: SpecView): HclBlock {
  const raw = spec.unseal?.["kms"];
  if (!isObject(raw)) throw new ConfigError("unseal.kms", "is required for unseal.type kms");
  const { name, nameField, settings: rest, settingsPrefix } = kmsSealParts(raw);
  if (typeof name !== "string" || !/^[a-z0-9][a-z0-9_-]*$/.test(name))
    throw new ConfigError(
      `unseal.kms.${nameField}`,
      "must name the KMS plugin (lower-case letters, digits, - and _)",
    );
  const settings: Record<string, string | number | boolean> = record();
  for (const [k, v] of Object.entries(rest)) {
    const at = `unseal.kms.${settingsPrefix}${k}`;
    if (!/^[a-z][a-z0-9_]*$/.test(k)) throw new ConfigError(at, "is not a snake_case setting name");
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
      throw new ConfigError(at, "must be a string, number or boolean");
    settings[k] = v;
  }
  return block("seal", [name], attrs(settings, "unseal.kms"));
}

/** The seal type's definition, for the built-in types with a spec block. */
function sealDef(spec: SpecView): { def: SealType; raw: Record<string, unknown> } | undefined {
  const type = sealType(spec);
  const def = Object.hasOwn(SEAL_TYPES, type) ? SEAL_TYPES[type] : undefined;
  if (!def) return undefined;
  const raw = spec.unseal?.[def.specField];
  return isObject(raw) ? { def, raw } : undefined;
}

const given = (v: unknown): boolean => v !== undefined && v !== null && v !== "";

/**
 * Spec fields holding credentials given inline (`unseal.transit.token`, …, and a KMS plugin's
 * credential-like settings): the spec is readable by anyone who may read the cluster object, so
 * these are a risk the status says out loud, and the Hardened profile refuses them.
 */
export function inlineSealSecrets(spec: SpecView): string[] {
  if (sealType(spec) === "kms") return pluginSecretSettings(spec).map((k) => `unseal.kms.${k}`);
  const found = sealDef(spec);
  if (!found) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(found.raw)) {
    if (!given(v)) continue;
    const mapped = Object.hasOwn(found.def.names, k) ? found.def.names[k] : k;
    if (mapped && Object.hasOwn(found.def.secrets, mapped)) out.push(`unseal.${found.def.specField}.${k}`);
  }
  return out;
}

/** A KMS plugin seal's settings whose names say they carry a credential. */
function pluginSecretSettings(spec: SpecView): string[] {
  const raw = spec.unseal?.["kms"];
  if (!isObject(raw)) return [];
  const { settings, settingsPrefix } = kmsSealParts(raw);
  return Object.entries(settings)
    .filter(([k, v]) => given(v) && isSecretField(k))
    .map(([k]) => `${settingsPrefix}${k}`);
}

/** An environment variable for the seal, with its value from a Secret the operator writes. */
export interface SealCredential {
  /** Variable name, also the key in the operator's seal-credentials Secret. */
  env: string;
  value: string;
}

/**
 * The inline credentials as the variables OpenBao's seal reads them from. Their values go into the
 * operator's seal-credentials Secret and reach the pods by secretKeyRef; the rendered stanza leaves
 * the settings out (renderSeal).
 */
export function sealCredentialEnv(spec: SpecView): SealCredential[] {
  const found = sealDef(spec);
  if (!found) return [];
  const out: SealCredential[] = [];
  for (const [k, v] of Object.entries(found.raw)) {
    if (!given(v)) continue;
    const mapped = Object.hasOwn(found.def.names, k) ? found.def.names[k] : k;
    const env = mapped && Object.hasOwn(found.def.secrets, mapped) ? found.def.secrets[mapped] : undefined;
    if (env) out.push({ env, value: String(v) });
  }
  return out.sort((a, b) => collate(a.env, b.env));
}

/**
 * Variables taken from the user's `unseal.credentialsSecretRef` Secret for the seal type: variable
 * → key in that Secret. One the spec also gives inline is left out (the inline value wins).
 */
export function sealRefEnv(spec: SpecView): Record<string, string> {
  const found = sealDef(spec);
  if (!found) return {};
  const inline = new Set(sealCredentialEnv(spec).map((c) => c.env));
  const out: Record<string, string> = {};
  for (const [env, key] of Object.entries(found.def.refEnv)) if (!inline.has(env)) out[env] = key;
  return out;
}

/**
 * True when a seal credential has to stay in config.hcl (a KMS plugin's setting: OpenBao knows no
 * variable for it), so the rendered file must be kept in a Secret (see secret-config.ts).
 */
export function sealKeepsCredentialInFile(spec: SpecView): boolean {
  return sealType(spec) === "kms" && pluginSecretSettings(spec).length > 0;
}
