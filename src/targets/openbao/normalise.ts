/**
 * Paths upstream removed or renamed by its 0.5.0 release that this operator still accepts for one
 * more step, mapped to their 0.5 form in one place. The reconciler works on the normalised spec
 * (so everything downstream knows only the 0.5 names), and each earlier path found is reported: the
 * `Deprecated` condition and an admission warning name it with its replacement.
 *
 * Pure and schema-free: the input may be any JSON; nothing is changed in place. When the earlier and
 * the 0.5 path are both set, the 0.5 value wins and the earlier one is dropped (and still reported).
 */

export interface Deprecation {
  /** The earlier path, from the object's root, e.g. `spec.tls.acme.domain`. */
  field: string;
  /** The 0.5 path that replaces it. */
  replacement: string;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Renamed settings inside one block: earlier name → 0.5 name. */
const RENAMED: { block: string[]; names: Record<string, string> }[] = [
  {
    block: ["unseal", "kmip"],
    names: { address: "endpoint", certificate: "clientCert", key: "clientKey", tlsServerName: "serverName" },
  },
];

/** Returns the spec with every earlier path in its 0.5 form, and the earlier paths that were set. */
export function normaliseClusterSpec<T>(spec: T): { spec: T; deprecated: Deprecation[] } {
  if (!isObject(spec)) return { spec, deprecated: [] };
  const out = structuredClone(spec) as Obj;
  const deprecated: Deprecation[] = [];
  const note = (field: string, replacement: string) =>
    deprecated.push({ field: `spec.${field}`, replacement: `spec.${replacement}` });

  // tls.acme.domain: one name, now the one-item list domains.
  const acme = isObject(out["tls"]) && isObject(out["tls"]["acme"]) ? out["tls"]["acme"] : undefined;
  if (acme && acme["domain"] !== undefined) {
    const list = acme["domains"];
    if (!Array.isArray(list) || list.length === 0) acme["domains"] = [acme["domain"]];
    delete acme["domain"];
    note("tls.acme.domain", "tls.acme.domains");
  }

  // maintenance.restartAt: now runtime.restartAt.
  const maintenance = isObject(out["maintenance"]) ? out["maintenance"] : undefined;
  if (maintenance && maintenance["restartAt"] !== undefined) {
    const runtime = isObject(out["runtime"]) ? out["runtime"] : {};
    if (runtime["restartAt"] === undefined) runtime["restartAt"] = maintenance["restartAt"];
    out["runtime"] = runtime;
    delete maintenance["restartAt"];
    note("maintenance.restartAt", "runtime.restartAt");
  }

  // Seal option names of the January API.
  for (const { block, names } of RENAMED) {
    const parent = block.slice(0, -1).reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), out);
    const last = block[block.length - 1]!;
    if (!isObject(parent) || !isObject(parent[last])) continue;
    // Renamed in place: settings keep their order, so the rendered stanza (and the pods) stay as they were.
    const renamed: Obj = {};
    for (const [k, v] of Object.entries(parent[last])) {
      const now = Object.hasOwn(names, k) ? names[k]! : undefined;
      if (now === undefined) {
        if (!(k in renamed)) renamed[k] = v;
        continue;
      }
      note(`${block.join(".")}.${k}`, `${block.join(".")}.${now}`);
      // The 0.5 name, when also set, wins.
      if ((parent[last] as Obj)[now] === undefined) renamed[now] = v;
    }
    parent[last] = renamed;
  }
  // ocikms.authType named the mode; 0.5 has one switch for API-key auth.
  const oci =
    isObject(out["unseal"]) && isObject(out["unseal"]["ocikms"]) ? out["unseal"]["ocikms"] : undefined;
  if (oci && typeof oci["authType"] === "string") {
    const mode = oci["authType"].toLowerCase().replace(/[^a-z]/g, "");
    // Anything else is left as written, for the seal renderer to refuse by name.
    if (mode === "apikey" || mode === "instanceprincipal") {
      const explicit = oci["authTypeAPIKey"];
      delete oci["authType"];
      // Last, where the seal renderer put the switch it derived from authType.
      delete oci["authTypeAPIKey"];
      oci["authTypeAPIKey"] = explicit ?? mode === "apikey";
      note("unseal.ocikms.authType", "unseal.ocikms.authTypeAPIKey");
    }
  }
  // upgrade.tokenSecretRef: upstream refuses it since 0.1.0, and so does our CRD now. An object
  // stored before keeps it (validation ratcheting) and it is still read there (the upgrade's token
  // when no JWT role is set), so it is only reported, not moved.
  const upgrade = isObject(out["upgrade"]) ? out["upgrade"] : undefined;
  if (upgrade && isObject(upgrade["tokenSecretRef"])) note("upgrade.tokenSecretRef", "upgrade.jwtAuthRole");
  return { spec: out as T, deprecated };
}

/** One line per earlier path, for a condition message or an admission warning. */
export function describeDeprecation(d: Deprecation): string {
  return `${d.field} is deprecated (removed upstream in 0.5): use ${d.replacement}`;
}

/** A KMS plugin seal block in either form: upstream 0.5's `{pluginName, config}` or the earlier `{name, <settings>}`. */
export interface KmsSealParts {
  name: unknown;
  /** Where the name is, relative to `unseal.kms`. */
  nameField: "pluginName" | "name";
  settings: Obj;
  /** Prefix of a setting's path relative to `unseal.kms` ("config." or ""). */
  settingsPrefix: "config." | "";
}

export function kmsSealParts(raw: Obj): KmsSealParts {
  if (raw["pluginName"] !== undefined) {
    const config = raw["config"];
    return {
      name: raw["pluginName"],
      nameField: "pluginName",
      settings: isObject(config) ? config : {},
      settingsPrefix: "config.",
    };
  }
  const { name, ...settings } = raw;
  return { name, nameField: "name", settings, settingsPrefix: "" };
}
