/**
 * The seal stanza. The default is the operator-managed static key (a file mounted from the
 * unseal-key Secret), which auto-unseals every pod without an outside service. Other seal types are
 * rendered from their spec blocks with OpenBao's own setting names.
 */
import { ConfigError } from "./errors.js";
import { attrs, block, type HclBlock } from "./hcl.js";
import { type ConfigPaths, DEFAULT_STATIC_KEY_ID } from "./options.js";
import type { SpecView } from "./spec-view.js";
import { isObject, mapSettings, record } from "./values.js";

interface SealType {
  /** Spec field holding the block (upstream's names). */
  specField: string;
  /** Upstream camelCase name → OpenBao name; null: OpenBao has no such setting. */
  names: Record<string, string | null>;
  /** Settings that carry secret values when given inline. */
  secrets: string[];
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
    secrets: ["token"],
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
    secrets: ["secret_key", "session_token"],
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
    secrets: [],
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
    secrets: ["client_secret"],
  },
  kmip: {
    specField: "kmip",
    names: {
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
    secrets: [],
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
    secrets: [],
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
    secrets: ["pin"],
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
  const settings = mapSettings(given, `unseal.${def.specField}`, def.names, `OpenBao's ${type} seal`);
  return block("seal", [type], attrs({ ...settings, ...extra }, `unseal.${def.specField}`));
}

/**
 * A seal served by a KMS plugin (OpenBao 2.6+): `unseal.kms.name` names the plugin (declared in
 * spec.plugins with type kms) and the seal stanza; the other keys are the plugin's own settings,
 * which must be written as OpenBao-style identifiers.
 */
function renderPluginSeal(spec: SpecView): HclBlock {
  const raw = spec.unseal?.["kms"];
  if (!isObject(raw)) throw new ConfigError("unseal.kms", "is required for unseal.type kms");
  const { name, ...rest } = raw;
  if (typeof name !== "string" || !/^[a-z0-9][a-z0-9_-]*$/.test(name))
    throw new ConfigError(
      "unseal.kms.name",
      "must name the KMS plugin (lower-case letters, digits, - and _)",
    );
  const settings: Record<string, string | number | boolean> = record();
  for (const [k, v] of Object.entries(rest)) {
    if (!/^[a-z][a-z0-9_]*$/.test(k))
      throw new ConfigError(`unseal.kms.${k}`, "is not a snake_case setting name");
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
      throw new ConfigError(`unseal.kms.${k}`, "must be a string, number or boolean");
    settings[k] = v;
  }
  return block("seal", [name], attrs(settings, "unseal.kms"));
}

/**
 * Spec fields whose values are secrets written into the config (seal credentials given inline).
 * When this is not empty the workload must keep the rendered config in a Secret, not a ConfigMap.
 */
export function inlineSealSecrets(spec: SpecView): string[] {
  const type = sealType(spec);
  const def = Object.hasOwn(SEAL_TYPES, type) ? SEAL_TYPES[type] : undefined;
  if (!def) return [];
  const raw = spec.unseal?.[def.specField];
  if (!isObject(raw)) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined || v === "") continue;
    const mapped = Object.hasOwn(def.names, k) ? def.names[k] : k;
    if (mapped && def.secrets.includes(mapped)) out.push(`unseal.${def.specField}.${k}`);
  }
  return out;
}
