/**
 * How seal credentials reach the pods: always from Secrets, never from the config file. Inline
 * credentials go into the operator's `<name>-seal-credentials` Secret and arrive as environment
 * variables by secretKeyRef; a user's `unseal.credentialsSecretRef` Secret is mounted at
 * {@link SEAL_CREDS_DIR} and its well-known keys are offered as variables too (optional, as upstream
 * wires them). Pure: the cluster in, pod fragments and the Secret out.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { collate } from "../../../../runtime/text-order.js";
import { refOf } from "../../cluster-ref.js";
import { clusterLabels, clusterNames } from "../../identity.js";
import { pkcs11Runtime } from "../config/pkcs11-runtime.js";
import { sealCredentialEnv, sealRefEnv, sealType } from "../config/seal.js";
import type { SpecView } from "../config/spec-view.js";

type Obj = Record<string, unknown>;

/** Where the user's credentials Secret is mounted (upstream's path, which its samples name). */
export const SEAL_CREDS_DIR = "/etc/bao/seal-creds";

const view = (c: OpenBaoCluster): SpecView => c.spec as unknown as SpecView;
const refName = (c: OpenBaoCluster): string | undefined =>
  // A reference that names nothing mounts nothing (SecretReferencesNamed says so).
  c.spec.unseal?.credentialsSecretRef?.name?.trim() || undefined;

/** The operator's Secret of inline seal credentials; undefined when the spec gives none. */
export function buildSealCredentialsSecret(c: OpenBaoCluster): Obj | undefined {
  const creds = sealCredentialEnv(view(c));
  if (creds.length === 0) return undefined;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: clusterNames(refOf(c)).sealCredentialsSecret,
      namespace: c.metadata.namespace,
      labels: clusterLabels(refOf(c)),
    },
    type: "Opaque",
    data: Object.fromEntries(creds.map((k) => [k.env, Buffer.from(k.value, "utf8").toString("base64")])),
  };
}

/** The seal's environment: every value by reference to a Secret, none inline. */
export function sealEnv(c: OpenBaoCluster): Obj[] {
  const own = clusterNames(refOf(c)).sealCredentialsSecret;
  const out: Obj[] = sealCredentialEnv(view(c)).map((k) => ({
    name: k.env,
    valueFrom: { secretKeyRef: { name: own, key: k.env } },
  }));
  const ref = refName(c);
  if (ref) {
    for (const [env, key] of Object.entries(sealRefEnv(view(c))))
      out.push({ name: env, valueFrom: { secretKeyRef: { name: ref, key, optional: true } } });
    // GCP reads a credentials file, not a variable holding the key; point at the mounted one.
    if (sealType(view(c)) === "gcpckms" && !c.spec.unseal?.gcpCloudKMS?.credentials)
      out.push({ name: "GOOGLE_APPLICATION_CREDENTIALS", value: `${SEAL_CREDS_DIR}/credentials.json` });
  }
  out.push(...pkcs11Env(c, ref));
  return out.sort((a, b) => collate(String(a["name"]), String(b["name"])));
}

/**
 * The user's credentials Secret as a volume, for seal settings that name files in it. A pkcs11
 * seal mounts only the keys its `runtime.fileEnv` names (upstream's wiring: the PIN and the
 * `runtime.env` keys arrive as variables and stay off the filesystem), and nothing without them.
 */
export function sealVolumes(c: OpenBaoCluster): { volumes: Obj[]; mounts: Obj[] } {
  const ref = refName(c);
  if (!ref || sealType(view(c)) === "static") return { volumes: [], mounts: [] };
  let items: Obj[] | undefined;
  if (sealType(view(c)) === "pkcs11") {
    const keys = [...new Set(fileEnvKeys(c))];
    if (keys.length === 0) return { volumes: [], mounts: [] };
    items = keys.map((key) => ({ key, path: key }));
  }
  return {
    volumes: [
      { name: "seal-creds", secret: { secretName: ref, defaultMode: 0o440, ...(items ? { items } : {}) } },
    ],
    mounts: [{ name: "seal-creds", mountPath: SEAL_CREDS_DIR, readOnly: true }],
  };
}

/** A runtime the config renderer refused has no wiring (InvalidSpec already names the field). */
function runtimeOf(c: OpenBaoCluster): ReturnType<typeof pkcs11Runtime> {
  try {
    return pkcs11Runtime(view(c));
  } catch {
    return undefined;
  }
}

function fileEnvKeys(c: OpenBaoCluster): string[] {
  return (runtimeOf(c)?.mappings ?? []).filter((m) => m.kind === "fileEnv").map((m) => m.secretKey);
}

/**
 * The PKCS#11 library's variables: LD_LIBRARY_PATH, `env` keys by secretKeyRef (required: a library
 * missing its settings should not start half-configured), `fileEnv` as the mounted file's path.
 */
function pkcs11Env(c: OpenBaoCluster, ref: string | undefined): Obj[] {
  const runtime = runtimeOf(c);
  if (!runtime) return [];
  const out: Obj[] = runtime.libraryPath ? [{ name: "LD_LIBRARY_PATH", value: runtime.libraryPath }] : [];
  if (!ref) return out;
  for (const m of runtime.mappings)
    out.push(
      m.kind === "env"
        ? { name: m.name, valueFrom: { secretKeyRef: { name: ref, key: m.secretKey } } }
        : { name: m.name, value: `${SEAL_CREDS_DIR}/${m.secretKey}` },
    );
  return out;
}
