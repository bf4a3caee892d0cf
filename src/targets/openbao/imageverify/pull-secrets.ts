/**
 * Registry credentials from image pull Secrets (`kubernetes.io/dockerconfigjson` or the older
 * `kubernetes.io/dockercfg`), the same Secrets a kubelet pulls with. Pure; the values never leave
 * this module's return value (errors name the Secret, not what is in it).
 */

export interface RegistryCredentials {
  username: string;
  password: string;
}

/** A pull Secret as read from the API: its name, type and base64 data. */
export interface PullSecret {
  name: string;
  type?: string;
  data?: Record<string, string>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The registry a docker config key names: `https://index.docker.io/v1/` → `registry-1.docker.io`. */
export function registryOfKey(key: string): string {
  const host = key
    .replace(/^[a-z]+:\/\//, "")
    .replace(/\/.*$/, "")
    .toLowerCase();
  return host === "index.docker.io" || host === "docker.io" ? "registry-1.docker.io" : host;
}

function entryCredentials(entry: unknown): RegistryCredentials | undefined {
  if (!isObject(entry)) return undefined;
  const auth = entry["auth"];
  if (typeof auth === "string" && auth !== "") {
    const decoded = Buffer.from(auth, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const username = entry["username"];
  const password = entry["password"];
  if (typeof username === "string" && typeof password === "string" && username !== "")
    return { username, password };
  return undefined;
}

/**
 * Registry host → credentials, from the Secrets in order (a later Secret wins for the same registry,
 * as upstream merges them). Throws naming the Secret when one is not a pull Secret.
 */
export function pullCredentials(secrets: readonly PullSecret[]): Map<string, RegistryCredentials> {
  const out = new Map<string, RegistryCredentials>();
  for (const s of secrets) {
    const key =
      s.type === "kubernetes.io/dockerconfigjson"
        ? ".dockerconfigjson"
        : s.type === "kubernetes.io/dockercfg"
          ? ".dockercfg"
          : undefined;
    if (!key)
      throw new Error(
        `Secret ${s.name} has type ${s.type ?? "(none)"}, not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg`,
      );
    const raw = s.data?.[key];
    if (!raw) throw new Error(`Secret ${s.name} has no ${key} key`);
    let doc: unknown;
    try {
      doc = JSON.parse(Buffer.from(raw, "base64").toString("utf8"));
    } catch {
      throw new Error(`Secret ${s.name}: ${key} is not JSON`);
    }
    // dockerconfigjson wraps the map in "auths"; the older dockercfg is the map itself.
    const auths = key === ".dockerconfigjson" ? (isObject(doc) ? doc["auths"] : undefined) : doc;
    if (!isObject(auths)) continue;
    for (const [registry, entry] of Object.entries(auths)) {
      const creds = entryCredentials(entry);
      if (creds) out.set(registryOfKey(registry), creds);
    }
  }
  return out;
}
