import {
  CLUSTER_POLICY,
  type PolicyTable,
  RESTORE_POLICY,
} from "../../src/targets/openbao/policies/rules.js";

// One case per admission rule of the openbao target, shared by the unit test (the TypeScript half
// of the rule table, as `validate` runs it) and the integration test (the chart's
// ValidatingAdmissionPolicies, on the real API server): the same object is refused by both with
// the same message, and its fixed twin admitted by both.

type Spec = Record<string, unknown>;

export interface PolicyCase {
  table: PolicyTable;
  /** The rule's id in the table. */
  rule: string;
  /** The spec refused (merged over the kind's base spec). */
  bad: Spec;
  /** The same spec with the one thing fixed. */
  good: Spec;
  /** Transition rules: the object is created as `before`, then updated to bad/good. */
  before?: Spec;
  /** The CRD's own schema refuses the bad object first, so only the TypeScript half can be shown it. */
  crdRefuses?: string;
}

export const CLUSTER_BASE: Spec = { version: "2.7.2", storage: { size: "1Gi" } };
export const RESTORE_BASE: Spec = {
  cluster: "c",
  source: { key: "c/snap.snap", target: { endpoint: "https://s3.example.com", bucket: "b" } },
};

const request = (name: string, path: string) => ({ name, operation: "update", path });
/** What Hardened asks of the rest of the spec, so one case breaks one rule only. */
const HARDENED: Spec = {
  profile: "Hardened",
  replicas: 3,
  tls: { mode: "External" },
  unseal: {
    type: "transit",
    transit: { address: "https://transit.example.com", mountPath: "transit", keyName: "k" },
  },
  selfInit: { enabled: true, requests: [request("audit", "sys/audit/stdout")] },
};
const backup = (target: Spec, extra: Spec = {}): Spec => ({
  backup: {
    schedule: "0 3 * * *",
    jwtAuthRole: "backup",
    target: {
      bucket: "b",
      credentialsSecretRef: { name: "s3" },
      endpoint: "https://s3.example.com",
      ...target,
    },
    ...extra,
  },
});
const egress = { network: { egressRules: [{ ports: [{ port: 443, protocol: "TCP" }] }] } };

export const CLUSTER_CASES: PolicyCase[] = [
  {
    table: CLUSTER_POLICY,
    rule: "hardened-baseline",
    bad: { ...HARDENED, tls: { mode: "OperatorManaged" } },
    good: HARDENED,
  },
  {
    table: CLUSTER_POLICY,
    rule: "self-init-requests",
    bad: { selfInit: { enabled: true } },
    good: { selfInit: { enabled: true, requests: [request("a", "sys/audit/a")] } },
  },
  {
    table: CLUSTER_POLICY,
    rule: "self-init-request-shape",
    bad: {
      selfInit: {
        enabled: true,
        requests: Array.from({ length: 65 }, (_, i) => request(`r${i}`, `sys/audit/r${i}`)),
      },
    },
    good: {
      selfInit: {
        enabled: true,
        requests: Array.from({ length: 64 }, (_, i) => request(`r${i}`, `sys/audit/r${i}`)),
      },
    },
  },
  {
    table: CLUSTER_POLICY,
    rule: "gateway-required",
    bad: { gateway: { enabled: true, hostname: "", gatewayRef: { name: "gw" } } },
    good: { gateway: { enabled: true, hostname: "bao.example.com", gatewayRef: { name: "gw" } } },
    crdRefuses: "spec.gateway.hostname has minLength 1",
  },
  {
    table: CLUSTER_POLICY,
    rule: "backup-required",
    bad: backup({}, { schedule: "0 3 * *" }),
    good: backup({}),
  },
  {
    table: CLUSTER_POLICY,
    rule: "hardened-egress",
    bad: { ...HARDENED, upgrade: { preUpgradeSnapshot: true } },
    good: { ...HARDENED, upgrade: { preUpgradeSnapshot: true }, ...egress },
  },
  {
    table: CLUSTER_POLICY,
    rule: "backup-endpoint-local",
    bad: backup({ endpoint: "http://localhost:9000" }),
    good: backup({ endpoint: "http://minio.storage.svc:9000" }),
  },
  {
    table: CLUSTER_POLICY,
    rule: "backup-endpoint-link-local",
    bad: backup({ endpoint: "http://169.254.169.254/latest" }),
    good: backup({ endpoint: "http://minio.storage.svc:9000" }),
  },
  {
    table: CLUSTER_POLICY,
    rule: "hardened-backup-scheme",
    bad: { ...HARDENED, ...egress, ...backup({ endpoint: "http://minio.storage.svc:9000" }) },
    good: { ...HARDENED, ...egress, ...backup({ endpoint: "https://minio.storage.svc:9000" }) },
  },
  {
    table: CLUSTER_POLICY,
    rule: "hardened-replicas",
    bad: { ...HARDENED, replicas: 1 },
    good: HARDENED,
  },
  {
    table: CLUSTER_POLICY,
    rule: "system-secret-refs",
    // spec.upgrade.tokenSecretRef, which the rule also reads, is refused by the CRD itself now.
    bad: backup({}, { tokenSecretRef: { name: "other-root-token" } }),
    good: backup({}, { tokenSecretRef: { name: "backup-token" } }),
  },
  {
    table: CLUSTER_POLICY,
    rule: "storage-class-immutable",
    before: { storage: { size: "1Gi", storageClassName: "fast" } },
    bad: { storage: { size: "1Gi", storageClassName: "slow" } },
    good: { storage: { size: "1Gi", storageClassName: "fast" } },
  },
  {
    table: CLUSTER_POLICY,
    rule: "storage-size-shrink",
    before: { storage: { size: "2Gi" } },
    bad: { storage: { size: "1500Mi" } },
    good: { storage: { size: "3Gi" } },
    crdRefuses: "the CRD's own transition rule: storage.size may only grow",
  },
  {
    table: CLUSTER_POLICY,
    rule: "oidc-issuer",
    bad: {
      selfInit: {
        enabled: false,
        oidc: { enabled: true, issuer: "https://issuer.example.com/.well-known/openid-configuration" },
      },
    },
    good: { selfInit: { enabled: false, oidc: { enabled: true, issuer: "https://issuer.example.com" } } },
  },
  {
    table: CLUSTER_POLICY,
    rule: "self-init-jwt-mount",
    bad: { selfInit: { enabled: true, requests: [request("role", "auth/jwt/role/app")] } },
    good: {
      selfInit: {
        enabled: true,
        requests: [request("mount", "sys/auth/jwt"), request("role", "auth/jwt/role/app")],
      },
    },
  },
  {
    table: CLUSTER_POLICY,
    rule: "self-init-jwt-operator-mount",
    bad: { selfInit: { enabled: true, requests: [request("role", "auth/jwt-operator/role/op")] } },
    good: {
      selfInit: {
        enabled: true,
        requests: [request("mount", "sys/auth/jwt-operator"), request("role", "auth/jwt-operator/role/op")],
      },
    },
  },
];

const source = (target: Spec): Spec => ({
  source: { key: "c/snap.snap", target: { bucket: "b", endpoint: "https://s3.example.com", ...target } },
});

export const RESTORE_CASES: PolicyCase[] = [
  {
    table: RESTORE_POLICY,
    rule: "override-lock-needs-force",
    bad: { overrideOperationLock: true },
    good: { overrideOperationLock: true, force: true },
    crdRefuses: "the CRD's own rule: overrideOperationLock needs force: true",
  },
  {
    table: RESTORE_POLICY,
    rule: "restore-endpoint-local",
    bad: source({ endpoint: "https://127.0.0.1:9000" }),
    good: source({ endpoint: "http://minio.storage.svc:9000" }),
  },
  {
    table: RESTORE_POLICY,
    rule: "restore-endpoint-link-local",
    bad: source({ endpoint: "https://169.254.169.254" }),
    good: source({ endpoint: "https://s3.example.com" }),
  },
  {
    table: RESTORE_POLICY,
    rule: "restore-endpoint-scheme",
    bad: source({ endpoint: "http://minio.example.com:9000" }),
    good: source({ endpoint: "http://minio.storage.svc.cluster.local:9000" }),
  },
  {
    table: RESTORE_POLICY,
    rule: "restore-system-secret-refs",
    bad: { tokenSecretRef: { name: "c-unseal-key" } },
    good: { tokenSecretRef: { name: "restore-token" } },
  },
];

export function caseMessage(c: PolicyCase): string {
  const rule = c.table.rules.find((r) => r.id === c.rule);
  if (!rule) throw new Error(`no rule ${c.rule} in ${c.table.name}`);
  return rule.message;
}
