/**
 * Which OpenBaoCluster spec fields the operator accepts but does not act on. The schema takes every
 * field of the upstream project so its manifests apply unchanged; a field that is set but has no
 * effect here must be said out loud (the workload controller reports this list in its
 * UnsupportedFields condition), never silently ignored.
 *
 * Pure and schema-free on purpose: the run path does not load TypeBox, and the input may be any
 * JSON (an object read from a file, or a future field the table does not know yet).
 */

/**
 * What the operator does with each part of the spec; the longest listed path that contains a field
 * decides. Paths are relative to `spec`, list items are `[]`.
 *
 * - `acted`: the operator implements it (config renderer, workload, TLS, networking, identity).
 * - `opaque`: acted on, and what is inside is free-form (passed to OpenBao as given).
 * - `unsupported`: accepted, not acted on yet; reported by this path when set.
 */
export type Support = "acted" | "opaque" | "unsupported";

export const FIELD_SUPPORT: Readonly<Record<string, Support>> = {
  // Workload (StatefulSets, storage, init, Autopilot, status, deletion).
  version: "acted",
  image: "acted",
  imagePullSecrets: "acted",
  replicas: "acted",
  // Its claims too: each is declared on the pod from the ResourceClaimTemplate of its name
  // (workload/statefulsets/resource-claims.ts).
  resources: "opaque",
  readReplicas: "acted",
  "readReplicas.resources": "opaque",
  // Pod labels and annotations (statefulsets/pod-metadata.ts); the read-replica template's metadata
  // and resources; its scheduling goes into the read-replica pods (statefulsets/scheduling.ts).
  podMetadata: "acted",
  "readReplicas.template": "acted",
  "readReplicas.template.resources": "opaque",
  "readReplicas.template.scheduling": "opaque",
  // The operator's rolling restart, the leader last (adminops/restart).
  runtime: "acted",
  // Recovery keys made once at self-init, PGP-encrypted per recipient (workload/config/recovery-keys.ts).
  recoveryKeys: "acted",
  // The shared claim file audit devices write on, one folder per pod (workload/statefulsets/shared-claims.ts).
  auditFileStorage: "acted",
  storage: "acted",
  paused: "acted",
  deletionPolicy: "acted",
  // Certificates and listener.
  tls: "acted",
  // config.hcl: server settings, telemetry, plugins, seals, audit devices, self-init requests.
  configuration: "acted",
  telemetry: "acted",
  plugins: "acted",
  unseal: "acted",
  "unseal.kms": "opaque",
  // The library path and variables the PKCS#11 library reads (statefulsets/seal-wiring.ts).
  "unseal.pkcs11.runtime": "acted",
  audit: "acted",
  "audit[].options": "opaque",
  "audit[].httpOptions.headers": "opaque",
  selfInit: "acted",
  "selfInit.requests[].data": "opaque",
  "selfInit.requests[].auditDevice.httpOptions.headers": "opaque",
  // Request headers and conditions (OpenBao 2.6+), rendered into the request blocks as given.
  "selfInit.requests[].headers": "opaque",
  "selfInit.requests[].when": "opaque",
  // JWT auth at auth/jwt-operator for the operator and its Jobs (workload/config/oidc-bootstrap.ts).
  "selfInit.oidc": "acted",
  // Networking and identity.
  service: "acted",
  ingress: "acted",
  gateway: "acted",
  network: "acted",
  // The pods' ServiceAccount: its name and annotations (workload/identity).
  serviceAccount: "acted",
  // Over the operator's pod security defaults, field by field (workload/statefulsets/security-context.ts).
  securityContext: "acted",
  workloadHardening: "acted",
  profile: "acted",
  initContainer: "unsupported",
  // Upgrades: both strategies, their requests, the pre-upgrade snapshot Job and blue-green's
  // pre-promotion hook Job (adminops/upgrade).
  upgrade: "acted",
  // Scheduled and manual backups (adminops/backup); restores read spec.restore's login role.
  backup: "acted",
  // Web identity: the Job's projected token exchanged at STS for the role (executor/contract.ts,
  // objectstore/s3.ts); workload identity annotations and pod labels (adminops/jobs/workload-identity.ts).
  "backup.target.roleArn": "acted",
  "backup.target.workloadIdentity": "acted",
  restore: "acted",
  // Blue-green's break-glass gate reads it.
  breakGlassAck: "acted",
  // cosign signatures checked before a pod or Job runs the image (imageverify/).
  imageVerification: "acted",
  operatorImageVerification: "acted",
  // Telemetry, the metrics-only listener, the metrics Service and ServiceMonitor (workload/config/metrics.ts,
  // workload/network/metrics.ts).
  observability: "acted",
  // openbao.org/maintenance on the StatefulSets and pods (workload/statefulsets/maintenance.ts);
  // restartAt is mapped to runtime.restartAt (normalise.ts).
  maintenance: "acted",
};

/**
 * Values inside an unsupported part that ask for nothing: the schema's defaults (the API server
 * fills them in whenever the parent is present) and the behaviour this operator has anyway.
 */
const INERT: Readonly<Record<string, readonly unknown[]>> = {
  "initContainer.enabled": [true],
  "unseal.credentialsSecretRef.name": [""],
};

// Deeper than any schema path; a hostile document nested further is not walked, only reported.
const MAX_DEPTH = 32;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The entry deciding `path`: the longest listed path equal to it or containing it. */
export function supportOf(path: string): { path: string; support: Support } | undefined {
  for (let p = path; p !== ""; p = parentOf(p)) {
    // Own keys only: a field named like an Object.prototype member (constructor, __proto__) is a field.
    if (Object.hasOwn(FIELD_SUPPORT, p)) return { path: p, support: FIELD_SUPPORT[p] as Support };
  }
  return undefined;
}

function parentOf(path: string): string {
  if (path.endsWith("[]")) return path.slice(0, -2);
  const dot = path.lastIndexOf(".");
  return dot < 0 ? "" : path.slice(0, dot);
}

/** True when `value` (at `path`) asks the operator for something. */
function asks(value: unknown, path: string, depth: number): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (Object.hasOwn(INERT, path) && INERT[path]?.includes(value)) return false;
  if (depth > MAX_DEPTH) return true;
  if (Array.isArray(value)) return value.some((item) => asks(item, `${path}[]`, depth + 1));
  if (isObject(value)) return Object.entries(value).some(([k, v]) => asks(v, `${path}.${k}`, depth + 1));
  return true;
}

/**
 * The spec fields that are set, accepted and not acted on, as `spec.<path>` (list items as `[]`),
 * sorted and each named once. A top-level field the table does not know (a newer upstream field, a
 * typo in a file that never met the API server) is listed too. Below a listed path, unknown fields
 * are the schema's business: the API server refuses them under strict validation and prunes them
 * otherwise.
 */
export function unsupportedFields(spec: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, path: string, depth: number): void => {
    if (path !== "") {
      const decision = supportOf(path);
      if (decision === undefined || decision.support === "unsupported") {
        // Reported by the listed path, or by the unknown field itself.
        if (asks(value, path, depth)) found.add(`spec.${decision?.path ?? path}`);
        return;
      }
      if (decision.support === "opaque") return;
    }
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) for (const item of value) walk(item, `${path}[]`, depth + 1);
    else if (isObject(value))
      for (const [k, v] of Object.entries(value)) walk(v, path === "" ? k : `${path}.${k}`, depth + 1);
  };
  if (isObject(spec)) walk(spec, "", 0);
  return [...found].sort();
}
