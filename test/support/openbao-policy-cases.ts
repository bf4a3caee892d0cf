import {
  type Authorizer,
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
  /**
   * A rule that asks the API server's authorizer (delegation.ts): `bad` and `good` are the same
   * object, refused for a writer who may edit OpenBaoClusters and OpenBaoRestores (and get the
   * Secret REFUSED_WRITER_SECRET) but holds nothing else besides `holds` (verbs on
   * openbaoclusters), and admitted for one who holds every verb and may get every Secret.
   */
  authz?: { holds: string[] };
}

/** The one Secret the refused writer of an authz case may get (the cases' object store credentials). */
export const REFUSED_WRITER_SECRET = "s3";

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
const egress = {
  network: {
    egressRules: [{ to: [{ ipBlock: { cidr: "10.0.0.0/8" } }], ports: [{ port: 443, protocol: "TCP" }] }],
  },
};

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

/** Profile Hardened's refusals beyond its baseline, each with its fixed twin: policy and webhook. */
const sc = (securityContext: Spec): Spec => ({ ...HARDENED, securityContext });
const transit = (extra: Spec): Spec => ({
  ...HARDENED,
  unseal: {
    type: "transit",
    transit: { address: "https://transit.example.com", mountPath: "transit", keyName: "k", ...extra },
  },
});
const hardenedCase = (rule: string, bad: Spec, good: Spec): PolicyCase => ({
  table: CLUSTER_POLICY,
  rule,
  bad,
  good,
});
export const HARDENED_CASES: PolicyCase[] = [
  hardenedCase("hardened-inline-transit-token", transit({ token: "s.inline" }), transit({})),
  hardenedCase(
    "hardened-inline-awskms-secret-key",
    {
      ...HARDENED,
      unseal: { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "k", secretKey: "inline" } },
    },
    { ...HARDENED, unseal: { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "k" } } },
  ),
  hardenedCase(
    "hardened-inline-awskms-session-token",
    {
      ...HARDENED,
      unseal: { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "k", sessionToken: "inline" } },
    },
    { ...HARDENED, unseal: { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "k" } } },
  ),
  hardenedCase(
    "hardened-inline-azure-client-secret",
    {
      ...HARDENED,
      unseal: {
        type: "azurekeyvault",
        azureKeyVault: { vaultName: "v", keyName: "k", tenantID: "t", clientID: "c", clientSecret: "inline" },
      },
    },
    {
      ...HARDENED,
      unseal: {
        type: "azurekeyvault",
        azureKeyVault: { vaultName: "v", keyName: "k", tenantID: "t", clientID: "c" },
      },
    },
  ),
  hardenedCase(
    "hardened-inline-pkcs11-pin",
    {
      ...HARDENED,
      unseal: { type: "pkcs11", pkcs11: { lib: "/usr/lib/p11.so", keyLabel: "k", slot: "0", pin: "1234" } },
    },
    { ...HARDENED, unseal: { type: "pkcs11", pkcs11: { lib: "/usr/lib/p11.so", keyLabel: "k", slot: "0" } } },
  ),
  hardenedCase(
    "hardened-transit-https",
    transit({ address: "http://transit.example.com:8200" }),
    transit({ address: "https://transit.example.com:8200" }),
  ),
  hardenedCase(
    "hardened-backup-skip-verify",
    { ...HARDENED, ...egress, ...backup({ insecureSkipVerify: true }) },
    { ...HARDENED, ...egress, ...backup({ insecureSkipVerify: false }) },
  ),
  hardenedCase(
    "hardened-servicemonitor-skip-verify",
    {
      ...HARDENED,
      observability: {
        metrics: {
          enabled: true,
          serviceMonitor: { enabled: true, tlsConfig: { insecureSkipVerify: true } },
        },
      },
    },
    {
      ...HARDENED,
      observability: {
        metrics: { enabled: true, serviceMonitor: { enabled: true, tlsConfig: { serverName: "bao" } } },
      },
    },
  ),
  hardenedCase(
    "hardened-egress-scope",
    {
      ...HARDENED,
      network: { egressRules: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }], ports: [{ port: 443 }] }] },
    },
    {
      ...HARDENED,
      network: {
        egressRules: [{ to: [{ podSelector: { matchLabels: { app: "s3" } } }], ports: [{ port: 443 }] }],
      },
    },
  ),
  hardenedCase("hardened-run-as-non-root", sc({ runAsNonRoot: false }), sc({ runAsNonRoot: true })),
  hardenedCase(
    "hardened-seccomp",
    sc({ seccompProfile: { type: "Unconfined" } }),
    sc({ seccompProfile: { type: "RuntimeDefault" } }),
  ),
  hardenedCase("hardened-root-ids", sc({ runAsUser: 0 }), sc({ runAsUser: 1000 })),
  hardenedCase(
    "hardened-sysctls",
    sc({ sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }] }),
    sc({}),
  ),
  hardenedCase(
    "hardened-apparmor",
    sc({ appArmorProfile: { type: "Unconfined" } }),
    sc({ appArmorProfile: { type: "RuntimeDefault" } }),
  ),
  hardenedCase(
    "hardened-selinux",
    sc({ seLinuxOptions: { type: "spc_t" } }),
    sc({ seLinuxOptions: { type: "container_t", level: "s0:c1,c2" } }),
  ),
  hardenedCase(
    "hardened-windows-options",
    sc({ windowsOptions: { runAsUserName: "ContainerUser" } }),
    sc({}),
  ),
];

/** Who may set what: one case per rule that asks the authorizer (same object, two writers). */
const authz = (rule: string, spec: Spec, holds: string[] = []): PolicyCase => ({
  table: CLUSTER_POLICY,
  rule,
  bad: spec,
  good: spec,
  authz: { holds },
});
export const DELEGATION_CASES: PolicyCase[] = [
  authz("verb-backup-image", backup({}, { image: "registry.example.com/executor:1" })),
  authz("verb-upgrade-image", { upgrade: { image: "registry.example.com/executor:1" } }),
  authz("verb-validation-hook", {
    upgrade: {
      strategy: "BlueGreen",
      jwtAuthRole: "upgrade",
      blueGreen: { verification: { prePromotionHook: { image: "registry.example.com/check:1" } } },
    },
  }),
  authz("verb-init-container-image", {
    initContainer: { enabled: true, image: "registry.example.com/init:1" },
  }),
  authz("verb-plugin-executables", {
    plugins: [
      {
        type: "secret",
        name: "p",
        version: "v1.0.0",
        binaryName: "p",
        sha256sum: "a".repeat(64),
        image: "registry.example.com/p:1",
      },
    ],
  }),
  authz("verb-service-account-annotations", {
    serviceAccount: { annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/bao" } },
  }),
  authz("verb-pod-cloud-identity", { podMetadata: { labels: { "azure.workload.identity/use": "true" } } }),
  authz("verb-backup-role-arn", {
    backup: {
      schedule: "0 3 * * *",
      jwtAuthRole: "backup",
      target: { bucket: "b", endpoint: "https://s3.example.com", roleArn: "arn:aws:iam::1:role/backup" },
    },
  }),
  authz(
    "verb-backup-workload-identity",
    backup({ workloadIdentity: { podLabels: { "azure.workload.identity/use": "true" } } }),
  ),
  authz("verb-image-trust-roots", {
    ...HARDENED,
    imageVerification: { enabled: true, issuer: "https://token.actions.githubusercontent.com", subject: "x" },
  }),
  authz("verb-operator-image-trust-roots", {
    ...HARDENED,
    operatorImageVerification: {
      enabled: true,
      publicKey: "-----BEGIN PUBLIC KEY-----\nx\n-----END PUBLIC KEY-----",
    },
  }),
  authz("verb-maintenance", { maintenance: { enabled: true } }),
  authz("secret-unseal-credentials", {
    unseal: {
      type: "transit",
      transit: { address: "https://transit.example.com", mountPath: "transit", keyName: "k" },
      credentialsSecretRef: { name: "transit-token" },
    },
  }),
  authz("secret-backup-credentials", backup({ credentialsSecretRef: { name: "other-s3" } })),
  authz("secret-backup-token", backup({}, { jwtAuthRole: "", tokenSecretRef: { name: "backup-token" } })),
  authz("secret-image-pull", { imagePullSecrets: [{ name: "pull" }] }),
  authz("secret-image-verification-pull", {
    imageVerification: { enabled: true, publicKey: "k", imagePullSecrets: [{ name: "pull" }] },
  }),
  authz("secret-operator-image-verification-pull", {
    operatorImageVerification: { enabled: true, publicKey: "k", imagePullSecrets: [{ name: "pull" }] },
  }),
  authz("secret-tls-ca", { tls: { mode: "External", caSecretName: "my-ca" } }),
  authz("secret-tls-server", { tls: { mode: "External", serverSecretName: "my-server" } }),
  authz("secret-acme-ca", {
    tls: {
      mode: "ACME",
      acme: { directoryURL: "https://acme.example.com/directory", caCertSecretRef: { name: "acme-ca" } },
    },
  }),
  authz("secret-ingress-tls", {
    ingress: { enabled: true, host: "bao.example.com", tlsSecretName: "bao-tls" },
  }),
  authz("secret-metrics-authorization", {
    observability: {
      metrics: {
        enabled: true,
        serviceMonitor: { enabled: true, authorization: { credentialsSecret: { name: "scrape", key: "t" } } },
      },
    },
  }),
  authz("secret-metrics-ca", {
    observability: {
      metrics: {
        enabled: true,
        serviceMonitor: { enabled: true, tlsConfig: { caSecret: { name: "scrape-ca", key: "ca" } } },
      },
    },
  }),
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

const restoreAuthz = (rule: string, spec: Spec, holds: string[] = ["restore"]): PolicyCase => ({
  table: RESTORE_POLICY,
  rule,
  bad: spec,
  good: spec,
  authz: { holds },
});
export const RESTORE_DELEGATION_CASES: PolicyCase[] = [
  restoreAuthz("verb-restore", {}, []),
  restoreAuthz("verb-restore-image", { image: "registry.example.com/executor:1" }),
  restoreAuthz("verb-restore-role-arn", source({ roleArn: "arn:aws:iam::1:role/restore" })),
  restoreAuthz(
    "verb-restore-workload-identity",
    source({ workloadIdentity: { serviceAccountAnnotations: { a: "b" } } }),
  ),
  restoreAuthz("restore-secret-credentials", source({ credentialsSecretRef: { name: "other-s3" } })),
  restoreAuthz("restore-secret-token", { tokenSecretRef: { name: "restore-token" } }),
];

export function caseMessage(c: PolicyCase): string {
  const rule = c.table.rules.find((r) => r.id === c.rule);
  if (!rule) throw new Error(`no rule ${c.rule} in ${c.table.name}`);
  return rule.message;
}

/** Every case, in table order: what the unit and the integration tests walk. */
export const ALL_CASES: PolicyCase[] = [
  ...CLUSTER_CASES,
  ...HARDENED_CASES,
  ...DELEGATION_CASES,
  ...RESTORE_CASES,
  ...RESTORE_DELEGATION_CASES,
];

/** Yes for a writer holding everything; for the refused writer only `holds` and get on REFUSED_WRITER_SECRET. */
export function caseAuthorizer(c: PolicyCase, everything: boolean): Authorizer {
  return (check) =>
    everything ||
    (check.resource === "secrets" && check.verb === "get" && check.name === REFUSED_WRITER_SECRET) ||
    (check.resource === "openbaoclusters" && (c.authz?.holds ?? []).includes(check.verb));
}
