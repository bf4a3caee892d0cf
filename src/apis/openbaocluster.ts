/**
 * OpenBaoCluster (`openbao.org/v1alpha1`): a Raft-backed OpenBao cluster with its TLS, networking,
 * initialization, backups and upgrades. Field names follow the public project the documents
 * describe, so its manifests apply here unchanged; provider-specific blocks the operator only passes
 * through to OpenBao's configuration are kept free-form.
 */
import { type Static, Type } from "@sinclair/typebox";
import {
  Conditions,
  cel,
  Duration,
  FreeFormObject,
  KindSchema,
  type KubeOptions,
  LocalObjectReference,
  ObservedGeneration,
  Quantity,
  ResourceRequirements,
  StringEnum,
  StringMap,
  Timestamp,
} from "./common.js";
import type { KindDefinition } from "./crd.js";

export const OpenBaoGroup = "openbao.org";
export const OpenBaoVersion = "v1alpha1";
export const OpenBaoApiVersion = `${OpenBaoGroup}/${OpenBaoVersion}` as const;
export const OpenBaoClusterKind = "OpenBaoCluster";
export const OpenBaoClusterPlural = "openbaoclusters";

/** Annotation whose new value asks for one manual backup. */
export const TriggerBackupAnnotation = "openbao.org/trigger-backup";

export const OpenBaoClusterCondition = {
  Available: "Available",
  Degraded: "Degraded",
  TLSReady: "TLSReady",
  Upgrading: "Upgrading",
  BackingUp: "BackingUp",
  OpenBaoInitialized: "OpenBaoInitialized",
  OpenBaoSealed: "OpenBaoSealed",
  OpenBaoLeader: "OpenBaoLeader",
  ReadReplicasReady: "ReadReplicasReady",
  StorageExpanded: "StorageExpanded",
} as const;
export type OpenBaoClusterConditionType =
  (typeof OpenBaoClusterCondition)[keyof typeof OpenBaoClusterCondition];

export const OpenBaoClusterReason = {
  Reconciled: "Reconciled",
  Paused: "Paused",
  InvalidSpec: "InvalidSpec",
  WaitingForTLS: "WaitingForTLS",
  WaitingForPods: "WaitingForPods",
  Initializing: "Initializing",
  Initialized: "Initialized",
  Sealed: "Sealed",
  Unsealed: "Unsealed",
  LeaderElected: "LeaderElected",
  NoLeader: "NoLeader",
  OperationLockHeld: "OperationLockHeld",
  UpgradeInProgress: "UpgradeInProgress",
  UpgradeComplete: "UpgradeComplete",
  UpgradeFailed: "UpgradeFailed",
  PreUpgradeBackupFailed: "PreUpgradeBackupFailed",
  BackupInProgress: "BackupInProgress",
  BackupSucceeded: "BackupSucceeded",
  BackupFailed: "BackupFailed",
  BreakGlass: "BreakGlass",
  StorageExpanding: "StorageExpanding",
  StorageShrinkRefused: "StorageShrinkRefused",
} as const;
export type OpenBaoClusterReasonType = (typeof OpenBaoClusterReason)[keyof typeof OpenBaoClusterReason];

export const ClusterPhases = ["Initializing", "Running", "Upgrading", "BackingUp", "Failed"] as const;
export type OpenBaoClusterPhase = (typeof ClusterPhases)[number];
export const TLSModes = ["OperatorManaged", "External", "ACME"] as const;
export type TLSMode = (typeof TLSModes)[number];
export const UpgradeStrategies = ["RollingUpdate", "BlueGreen"] as const;
export type UpgradeStrategy = (typeof UpgradeStrategies)[number];
export const ClusterOperations = ["Upgrade", "Backup", "Restore"] as const;
export type ClusterOperation = (typeof ClusterOperations)[number];
export const BackupProviders = ["s3", "gcs", "azure"] as const;
export type BackupProvider = (typeof BackupProviders)[number];
export const ClusterDeletionPolicies = ["Retain", "DeletePVCs", "DeleteAll"] as const;
export type ClusterDeletionPolicy = (typeof ClusterDeletionPolicies)[number];
/** Blue-green progress, in order; a failure leaves the forward path for RollingBack → RollbackCleanup. */
export const BlueGreenPhases = [
  "Idle",
  "DeployingGreen",
  "JoiningMesh",
  "Syncing",
  "Promoting",
  "DemotingBlue",
  "Cleanup",
  "RollingBack",
  "RollbackCleanup",
] as const;
export type BlueGreenPhase = (typeof BlueGreenPhases)[number];
export const UnsealTypes = [
  "static",
  "transit",
  "awskms",
  "gcpckms",
  "azurekeyvault",
  "kmip",
  "ocikms",
  "pkcs11",
  "kms",
] as const;
export type UnsealType = (typeof UnsealTypes)[number];

const SEMVER_PATTERN =
  "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";

const Text = (description: string, maxLength = 253, extra: KubeOptions = {}) =>
  Type.String({ description, maxLength, ...extra });
const Image = (description: string) => Type.String({ description, minLength: 1, maxLength: 512 });
const Flag = (description: string, value?: boolean) =>
  Type.Optional(Type.Boolean(value === undefined ? { description } : { description, default: value }));

// ---------------------------------------------------------------- storage

// Shrinking a volume is not something Kubernetes can do, so the definition refuses it up front
// instead of letting the StatefulSet and PVCs disagree. The isQuantity guards keep a malformed old
// value (which the pattern already refuses) from turning into a CEL evaluation error.
export const StorageSchema = Type.Object(
  {
    size: Quantity("Size of each data volume, e.g. 10Gi. It may grow but never shrink.", {
      minLength: 1,
      "x-kubernetes-validations": [
        cel(
          "!isQuantity(self) || !isQuantity(oldSelf) || !quantity(self).isLessThan(quantity(oldSelf))",
          "storage.size may only grow",
        ),
      ],
    }),
    storageClassName: Type.Optional(
      Text("StorageClass of the data volumes; the cluster default when unset."),
    ),
  },
  { description: "Persistent storage for the Raft data of each voter." },
);

// ---------------------------------------------------------------- TLS

export const ACMESchema = Type.Object(
  {
    directoryURL: Text("ACME directory URL of the certificate authority.", 2048, { minLength: 1 }),
    email: Type.Optional(Text("Contact address registered with the authority.")),
    domains: Type.Optional(
      Type.Array(Text("A DNS name."), { description: "Names to request a certificate for.", maxItems: 32 }),
    ),
    caCertSecretRef: Type.Optional(
      LocalObjectReference("Secret with the CA bundle that verifies a private ACME directory."),
    ),
    sharedCache: Type.Optional(
      Type.Object(
        {
          size: Type.Optional(Quantity("Size of the shared ACME cache volume.")),
          storageClassName: Type.Optional(Text("StorageClass of the shared cache volume.")),
        },
        { description: "A shared cache, so several pods serving one name do not each order certificates." },
      ),
    ),
  },
  { description: "Issuance by OpenBao's own ACME client." },
);

export const TLSSchema = Type.Object(
  {
    enabled: Flag("Serve TLS. Turning it off is only sensible for development.", true),
    mode: Type.Optional(
      StringEnum(TLSModes, {
        description:
          "OperatorManaged: the operator runs a CA and rotates certificates. External: Secrets come from elsewhere and are only validated. ACME: OpenBao obtains its own certificates.",
        default: "OperatorManaged",
      }),
    ),
    rotationPeriod: Type.Optional(
      Duration("How long before expiry an operator-managed certificate is renewed.", { default: "720h" }),
    ),
    extraSANs: Type.Optional(
      Type.Array(Text("A DNS name or IP address."), {
        description: "Names added to the server certificate besides the Service names.",
        maxItems: 64,
      }),
    ),
    caSecretName: Type.Optional(Text("Secret holding the CA, for External mode.")),
    serverSecretName: Type.Optional(Text("Secret holding the server key pair, for External mode.")),
    acme: Type.Optional(ACMESchema),
  },
  {
    description: "Who issues and rotates the listener certificates.",
    default: {},
    "x-kubernetes-validations": [
      cel("!has(self.mode) || self.mode != 'ACME' || has(self.acme)", "tls.mode ACME needs tls.acme"),
      cel(
        "(has(self.mode) && self.mode == 'ACME') || !has(self.acme)",
        "tls.acme belongs to tls.mode ACME only",
      ),
    ],
  } satisfies KubeOptions,
);

// ---------------------------------------------------------------- configuration

export const AutopilotSchema = Type.Object(
  {
    cleanupDeadServers: Flag("Remove Raft peers that stopped answering.", true),
    deadServerLastContactThreshold: Type.Optional(
      Duration("Silence after which a peer counts as dead.", { default: "5m" }),
    ),
    lastContactThreshold: Type.Optional(Duration("Silence after which a peer counts as unhealthy.")),
    maxTrailingLogs: Type.Optional(
      Type.Integer({ description: "Log entries a peer may lag before it counts as unhealthy.", minimum: 0 }),
    ),
    minQuorum: Type.Optional(
      Type.Integer({ description: "Voters below which Autopilot stops removing dead peers.", minimum: 3 }),
    ),
    serverStabilizationTime: Type.Optional(Duration("How long a new peer must be healthy before it votes.")),
  },
  { description: "Raft Autopilot, applied after initialization and re-applied when changed." },
);

export const ConfigurationSchema = Type.Object(
  {
    logLevel: Type.Optional(
      StringEnum(["trace", "debug", "info", "warn", "error", "err"] as const, {
        description: "OpenBao log level.",
        default: "info",
      }),
    ),
    logging: Type.Optional(
      Type.Object(
        { format: Type.Optional(StringEnum(["standard", "json"] as const, { description: "Log format." })) },
        { description: "Log output." },
      ),
    ),
    ui: Flag("Serve the web UI.", true),
    defaultLeaseTTL: Type.Optional(Duration("Default lease TTL for tokens and secrets.")),
    maxLeaseTTL: Type.Optional(Duration("Maximum lease TTL for tokens and secrets.")),
    cacheSize: Type.Optional(Type.Integer({ description: "Cache size in entries.", minimum: 0 })),
    disableCache: Flag("Turn the read cache off."),
    raft: Type.Optional(
      Type.Object(
        {
          performanceMultiplier: Type.Optional(
            Type.Integer({
              description: "Scales Raft timing; higher is more tolerant.",
              minimum: 0,
              maximum: 10,
            }),
          ),
          autopilot: Type.Optional(AutopilotSchema),
        },
        { description: "Raft storage tuning." },
      ),
    ),
  },
  {
    description:
      "Server settings rendered into config.hcl. Listener, storage and seal stanzas stay the operator's.",
  },
);

// ---------------------------------------------------------------- networking

export const ServiceSchema = Type.Object(
  {
    type: Type.Optional(
      StringEnum(["ClusterIP", "NodePort", "LoadBalancer"] as const, {
        description: "Type of the client Service.",
        default: "ClusterIP",
      }),
    ),
    annotations: Type.Optional(StringMap("Annotations added to the client Service.")),
    labels: Type.Optional(StringMap("Labels added to the client Service.")),
    loadBalancerSourceRanges: Type.Optional(
      Type.Array(Text("A CIDR."), { description: "CIDRs allowed through a LoadBalancer.", maxItems: 64 }),
    ),
  },
  { description: "The Service clients reach the active node through." },
);

export const IngressSchema = Type.Object(
  {
    enabled: Flag("Manage an Ingress."),
    host: Text("Host clients use, e.g. bao.example.com.", 253, { minLength: 1 }),
    path: Type.Optional(Text("Path routed to OpenBao.", 1024, { default: "/" })),
    pathType: Type.Optional(
      StringEnum(["Prefix", "Exact", "ImplementationSpecific"] as const, {
        description: "How the path matches.",
        default: "Prefix",
      }),
    ),
    className: Type.Optional(Text("IngressClass to use.")),
    annotations: Type.Optional(StringMap("Annotations added to the Ingress.")),
    tlsSecretName: Type.Optional(Text("TLS Secret for the Ingress; the cluster's own when unset.")),
  },
  { description: "An Ingress in front of the client Service." },
);

export const GatewaySchema = Type.Object(
  {
    enabled: Flag("Manage a route on an existing Gateway."),
    gatewayRef: Type.Object(
      {
        name: Text("Gateway name.", 253, { minLength: 1 }),
        namespace: Type.Optional(Text("Gateway namespace; this object's when unset.")),
      },
      { description: "The Gateway the route attaches to." },
    ),
    hostname: Text("Host name the route matches.", 253, { minLength: 1 }),
    listenerName: Type.Optional(Text("Listener (sectionName) on the Gateway.")),
    path: Type.Optional(Text("Path prefix of the route.", 1024, { default: "/" })),
    tlsPassthrough: Flag("Use a TLSRoute and let OpenBao terminate TLS."),
    annotations: Type.Optional(StringMap("Annotations added to the route.")),
    backendTLS: Type.Optional(
      Type.Object(
        {
          enabled: Flag("Create a BackendTLSPolicy so the Gateway verifies OpenBao.", true),
          hostname: Type.Optional(Text("Name verified in OpenBao's certificate.")),
        },
        { description: "TLS from the Gateway to OpenBao." },
      ),
    ),
  },
  { description: "Gateway API access, as an alternative to Ingress." },
);

const NetworkPolicyRules = (description: string) =>
  Type.Array(FreeFormObject("A NetworkPolicy rule, in the NetworkPolicy API's own shape."), {
    description,
    maxItems: 32,
  });

export const NetworkSchema = Type.Object(
  {
    apiServerCIDR: Type.Optional(Text("CIDR of the Kubernetes API server, for the egress policy.", 64)),
    apiServerEndpointIPs: Type.Optional(
      Type.Array(Text("An IP address.", 64), { description: "API server endpoint addresses.", maxItems: 16 }),
    ),
    dnsNamespace: Type.Optional(
      Text("Namespace of the cluster DNS service.", 63, { default: "kube-system" }),
    ),
    ingressRules: Type.Optional(
      NetworkPolicyRules("Extra ingress rules merged into the managed NetworkPolicy."),
    ),
    egressRules: Type.Optional(
      NetworkPolicyRules("Extra egress rules merged into the managed NetworkPolicy."),
    ),
  },
  { description: "The NetworkPolicy the operator manages around the pods." },
);

// ---------------------------------------------------------------- self-init, unseal, audit

export const SelfInitRequestSchema = Type.Object(
  {
    name: Type.String({
      description: "Unique name of the request; it names the request block.",
      minLength: 1,
      maxLength: 64,
      pattern: "^[A-Za-z_][A-Za-z0-9_-]*$",
    }),
    operation: StringEnum(["create", "read", "update", "delete", "list", "patch"] as const, {
      description: "API operation.",
    }),
    path: Text("API path, e.g. sys/auth/kubernetes.", 1024, { minLength: 1 }),
    data: Type.Optional(
      FreeFormObject("Request body. Stored in the object and in etcd: never put secret values here."),
    ),
    auditDevice: Type.Optional(FreeFormObject("Structured body for sys/audit/* paths.")),
    authMethod: Type.Optional(FreeFormObject("Structured body for sys/auth/* paths.")),
    secretEngine: Type.Optional(FreeFormObject("Structured body for sys/mounts/* paths.")),
    policy: Type.Optional(FreeFormObject("Structured body for sys/policies/* paths.")),
    allowFailure: Flag("Let initialization go on when this request fails.", false),
  },
  { description: "One API call OpenBao makes while it initializes itself." },
);
export type SelfInitRequest = Static<typeof SelfInitRequestSchema>;

export const SelfInitSchema = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        "Let OpenBao initialize itself. The root token is revoked afterwards, so requests must set up access.",
      default: false,
    }),
    requests: Type.Optional(
      Type.Array(SelfInitRequestSchema, {
        description: "Requests run in order during first start.",
        maxItems: 128,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      } satisfies KubeOptions),
    ),
    oidc: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean({ description: "Set up JWT auth for the operator's own lifecycle jobs." }),
          audience: Type.Optional(Text("Audience the operator's tokens carry.")),
          issuer: Type.Optional(
            Text("Issuer URL OpenBao trusts, when it sees the API server under another name.", 2048),
          ),
        },
        { description: "JWT auth for the operator; it does not give users access." },
      ),
    ),
  },
  { description: "OpenBao's native self-initialization." },
);

const unsealBlocks = {
  transit: "transit",
  awskms: "awskms",
  gcpckms: "gcpCloudKMS",
  azurekeyvault: "azureKeyVault",
  kmip: "kmip",
  ocikms: "ocikms",
  pkcs11: "pkcs11",
  kms: "kms",
} as const satisfies Record<Exclude<UnsealType, "static">, string>;

// One rule per seal type in each direction keeps the messages precise and each rule trivial to cost.
const unsealRules = Object.entries(unsealBlocks).flatMap(([type, block]) => [
  cel(`self.type != '${type}' || has(self.${block})`, `unseal.type ${type} needs unseal.${block}`),
  cel(`self.type == '${type}' || !has(self.${block})`, `unseal.${block} belongs to unseal.type ${type} only`),
]);

export const UnsealSchema = Type.Object(
  {
    type: StringEnum(UnsealTypes, {
      description: "Seal mechanism. static is the operator-managed key and needs no block.",
      default: "static",
    }),
    static: Type.Optional(
      Type.Object(
        {
          currentKey: Type.Optional(Text("Location of the static key.", 1024)),
          currentKeyID: Type.Optional(Text("Identifier of the static key.")),
        },
        { description: "Overrides for the operator-managed static seal." },
      ),
    ),
    transit: Type.Optional(FreeFormObject("Transit seal settings, passed to OpenBao's seal stanza.")),
    awskms: Type.Optional(FreeFormObject("AWS KMS seal settings.")),
    gcpCloudKMS: Type.Optional(FreeFormObject("GCP Cloud KMS seal settings.")),
    azureKeyVault: Type.Optional(FreeFormObject("Azure Key Vault seal settings.")),
    kmip: Type.Optional(FreeFormObject("KMIP seal settings.")),
    ocikms: Type.Optional(FreeFormObject("OCI KMS seal settings.")),
    pkcs11: Type.Optional(FreeFormObject("PKCS#11 seal settings.")),
    kms: Type.Optional(FreeFormObject("Plugin-backed KMS seal settings.")),
    credentialsSecretRef: Type.Optional(LocalObjectReference("Secret mounted for the seal's credentials.")),
  },
  {
    description: "Auto-unseal. The operator-managed static seal when omitted.",
    "x-kubernetes-validations": [
      cel("self.type == 'static' || !has(self.static)", "unseal.static belongs to unseal.type static only"),
      ...unsealRules,
    ],
  } satisfies KubeOptions,
);

export const AuditDeviceSchema = Type.Object(
  {
    type: StringEnum(["file", "syslog", "socket", "http"] as const, { description: "Audit device type." }),
    path: Text("Mount path of the device; unique in the list.", 253, { minLength: 1 }),
    description: Type.Optional(Text("Description of the device.", 1024)),
    fileOptions: Type.Optional(
      Type.Object(
        {
          filePath: Text("File the log goes to.", 1024, { minLength: 1 }),
          mode: Type.Optional(Text("Octal file mode, e.g. 0600.", 8)),
        },
        { description: "For type file." },
      ),
    ),
    httpOptions: Type.Optional(
      Type.Object(
        {
          uri: Text("Where entries are sent.", 2048, { minLength: 1 }),
          headers: Type.Optional(FreeFormObject("Headers sent with each entry.")),
        },
        { description: "For type http." },
      ),
    ),
    syslogOptions: Type.Optional(
      Type.Object(
        {
          facility: Type.Optional(Text("Syslog facility.", 64)),
          tag: Type.Optional(Text("Syslog tag.", 64)),
        },
        { description: "For type syslog." },
      ),
    ),
    socketOptions: Type.Optional(
      Type.Object(
        {
          address: Type.Optional(Text("Socket address.")),
          socketType: Type.Optional(Text("Network type such as tcp or udp.", 16)),
          writeTimeout: Type.Optional(Duration("Write deadline.")),
        },
        { description: "For type socket." },
      ),
    ),
    options: Type.Optional(
      FreeFormObject("Raw device options, for what the structured blocks do not cover."),
    ),
  },
  { description: "A declarative audit device." },
);

// ---------------------------------------------------------------- backup

export const BackupTargetSchema = Type.Object(
  {
    provider: Type.Optional(
      StringEnum(BackupProviders, { description: "Object storage flavour.", default: "s3" }),
    ),
    endpoint: Type.Optional(Text("HTTP(S) endpoint of the object store.", 2048)),
    bucket: Text("Bucket (or Azure container) name.", 253, { minLength: 1 }),
    pathPrefix: Type.Optional(
      Text("Prefix inside the bucket; objects land under <prefix>/<namespace>/<cluster>/.", 1024),
    ),
    credentialsSecretRef: Type.Optional(
      LocalObjectReference("Secret with the object store credentials, in the namespace of this object."),
    ),
    region: Type.Optional(Text("Region for S3-compatible clients.", 64)),
    usePathStyle: Flag(
      "Address buckets by path instead of by virtual host, as most S3-compatible servers need.",
      false,
    ),
    roleArn: Type.Optional(Text("Role to assume through web identity, for S3.", 2048)),
    insecureSkipVerify: Flag("Skip TLS verification of the endpoint. Development only."),
    gcs: Type.Optional(
      Type.Object({ project: Type.Optional(Text("GCP project.")) }, { description: "For provider gcs." }),
    ),
    azure: Type.Optional(
      Type.Object(
        {
          storageAccount: Type.Optional(Text("Storage account name.")),
          container: Type.Optional(Text("Blob container name.")),
        },
        { description: "For provider azure." },
      ),
    ),
  },
  {
    description: "An object storage location for snapshots.",
    "x-kubernetes-validations": [
      cel(
        "(has(self.provider) && self.provider == 'gcs') || !has(self.gcs)",
        "target.gcs belongs to provider gcs only",
      ),
      cel(
        "(has(self.provider) && self.provider == 'azure') || !has(self.azure)",
        "target.azure belongs to provider azure only",
      ),
    ],
  } satisfies KubeOptions,
);
export type BackupTarget = Static<typeof BackupTargetSchema>;

export const BackupSchema = Type.Object(
  {
    schedule: Text('Cron schedule, e.g. "0 3 * * *".', 128, { minLength: 1 }),
    target: BackupTargetSchema,
    retention: Type.Optional(
      Type.Object(
        {
          maxCount: Type.Optional(
            Type.Integer({ description: "Snapshots to keep; 0 keeps all.", minimum: 0, format: "int32" }),
          ),
          maxAge: Type.Optional(Duration("Snapshots older than this are deleted after a successful backup.")),
        },
        { description: "Which snapshots to keep." },
      ),
    ),
    jwtAuthRole: Type.Optional(Text("OpenBao JWT role the backup Job logs in with.")),
    tokenSecretRef: Type.Optional(
      LocalObjectReference("Secret with an OpenBao token, when no JWT role is set."),
    ),
    image: Type.Optional(Image("Executor image for backup Jobs.")),
  },
  { description: "Scheduled Raft snapshots to object storage." },
);

// ---------------------------------------------------------------- upgrade

export const BlueGreenSchema = Type.Object(
  {
    autoPromote: Flag(
      "Promote green once it has caught up; otherwise wait for upgrade.requests.promote.",
      true,
    ),
    maxJobFailures: Type.Optional(
      Type.Integer({ description: "Consecutive Job failures before giving up.", minimum: 1, default: 5 }),
    ),
    preUpgradeSnapshot: Flag("Take a snapshot before starting."),
    verification: Type.Optional(
      Type.Object(
        {
          minSyncDuration: Type.Optional(Duration("How long green must stay healthy before promotion.")),
          prePromotionHook: Type.Optional(
            Type.Object(
              {
                image: Image("Image of the validation Job."),
                command: Type.Optional(Type.Array(Text("Argument.", 4096), { maxItems: 64 })),
                args: Type.Optional(Type.Array(Text("Argument.", 4096), { maxItems: 64 })),
                timeoutSeconds: Type.Optional(
                  Type.Integer({ description: "Job timeout.", minimum: 1, default: 300, format: "int32" }),
                ),
              },
              { description: "A Job that must succeed before promotion." },
            ),
          ),
        },
        { description: "Checks before promotion." },
      ),
    ),
    autoRollback: Type.Optional(
      Type.Object(
        {
          enabled: Flag("Roll back automatically on failure.", true),
          onJobFailure: Flag("Roll back when Jobs keep failing before blue is demoted.", true),
          onValidationFailure: Flag("Roll back when the pre-promotion hook fails.", true),
        },
        { description: "When to roll back without being asked." },
      ),
    ),
  },
  { description: "Settings for the BlueGreen strategy." },
);

const RequestToken = (description: string) => Type.Optional(Text(description, 128, { minLength: 1 }));

export const UpgradeSchema = Type.Object(
  {
    strategy: Type.Optional(
      StringEnum(UpgradeStrategies, {
        description: "How a version change is rolled out.",
        default: "RollingUpdate",
      }),
    ),
    preUpgradeSnapshot: Flag("Take a snapshot (with spec.backup's target) before upgrading.", false),
    jwtAuthRole: Type.Optional(Text("OpenBao JWT role the upgrade Jobs log in with.")),
    image: Type.Optional(Image("Executor image for upgrade Jobs.")),
    requests: Type.Optional(
      Type.Object(
        {
          retry: RequestToken("Change to a new value to retry a failed rolling upgrade."),
          promote: RequestToken("Change to a new value to promote a held blue-green upgrade."),
          rollback: RequestToken("Change to a new value to abort or roll back a blue-green upgrade."),
        },
        { description: "One-shot requests: each acts once per new value." },
      ),
    ),
    blueGreen: Type.Optional(BlueGreenSchema),
  },
  { description: "How upgrades run." },
);

// ---------------------------------------------------------------- spec

export const OpenBaoClusterSpecSchema = Type.Object(
  {
    version: Type.String({
      description: "OpenBao version (semantic version); changing it starts an upgrade.",
      minLength: 1,
      maxLength: 64,
      pattern: SEMVER_PATTERN,
    }),
    image: Type.Optional(Image("Server image; derived from version when unset.")),
    imagePullSecrets: Type.Optional(
      Type.Array(LocalObjectReference("A pull Secret."), {
        description: "Pull Secrets for every image.",
        maxItems: 16,
      }),
    ),
    profile: Type.Optional(
      StringEnum(["Hardened", "Development"] as const, {
        description: "Security posture the operator enforces.",
      }),
    ),
    replicas: Type.Optional(
      Type.Integer({
        description: "Voters. Capped at one until the cluster is initialized.",
        minimum: 1,
        default: 3,
      }),
    ),
    resources: Type.Optional(ResourceRequirements("Resources of each voter's OpenBao container.")),
    readReplicas: Type.Optional(
      Type.Object(
        {
          replicas: Type.Optional(
            Type.Integer({ description: "Non-voting read replicas.", minimum: 0, default: 0 }),
          ),
          storage: Type.Optional(
            Type.Object(
              {
                size: Type.Optional(Quantity("Volume size of read replicas; the voters' when unset.")),
                storageClassName: Type.Optional(Text("StorageClass of read-replica volumes.")),
              },
              { description: "Storage overrides for read replicas." },
            ),
          ),
          resources: Type.Optional(ResourceRequirements("Resources of each read replica's container.")),
          service: Type.Optional(
            Type.Object(
              {
                enabled: Flag("Create a Service for read traffic."),
                type: Type.Optional(
                  StringEnum(["ClusterIP", "NodePort", "LoadBalancer"] as const, {
                    description: "Service type.",
                  }),
                ),
                annotations: Type.Optional(StringMap("Annotations of the read Service.")),
              },
              { description: "A Service for read traffic." },
            ),
          ),
        },
        { description: "A pool of non-voters that serve reads." },
      ),
    ),
    storage: StorageSchema,
    tls: Type.Optional(TLSSchema),
    configuration: Type.Optional(ConfigurationSchema),
    service: Type.Optional(ServiceSchema),
    ingress: Type.Optional(IngressSchema),
    gateway: Type.Optional(GatewaySchema),
    network: Type.Optional(NetworkSchema),
    selfInit: Type.Optional(SelfInitSchema),
    unseal: Type.Optional(UnsealSchema),
    audit: Type.Optional(
      Type.Array(AuditDeviceSchema, {
        description: "Audit devices, one per path.",
        maxItems: 16,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["path"],
      } satisfies KubeOptions),
    ),
    backup: Type.Optional(BackupSchema),
    upgrade: Type.Optional(UpgradeSchema),
    paused: Flag("Stop reconciling everything but deletion.", false),
    deletionPolicy: Type.Optional(
      StringEnum(ClusterDeletionPolicies, {
        description:
          "What goes with the object: Retain keeps volumes; DeletePVCs and DeleteAll remove them. Backups in object storage are never deleted.",
        default: "Retain",
      }),
    ),
    breakGlassAck: Type.Optional(
      Text("Set to status.breakGlass.nonce to acknowledge break glass and let automation resume.", 128),
    ),
  },
  { description: "The cluster to run." },
);
export type OpenBaoClusterSpec = Static<typeof OpenBaoClusterSpecSchema>;

// ---------------------------------------------------------------- status

const Count = (description: string) =>
  Type.Optional(Type.Integer({ description, minimum: 0, format: "int32" }));
const When = (description: string) => Type.Optional(Timestamp(description));
const Note = (description: string, maxLength = 1024) => Type.Optional(Text(description, maxLength));

export const BackupStatusSchema = Type.Object(
  {
    lastBackupTime: When("Last successful backup; a later failure leaves it alone."),
    lastAttemptTime: When("Last attempt, whatever its outcome."),
    lastAttemptScheduledTime: When("Schedule window of the last attempt; one attempt per window."),
    lastHandledManualTrigger: Note("Last trigger-backup annotation value acted on.", 253),
    nextScheduledBackup: When("Next scheduled run."),
    lastBackupKey: Note("Object key of the last successful snapshot."),
    lastBackupSize: Type.Optional(
      Type.Integer({ description: "Bytes in the last snapshot.", minimum: 0, format: "int64" }),
    ),
    lastBackupDuration: Note("How long the last backup took.", 64),
    consecutiveFailures: Count("Failures since the last success."),
    lastFailureReason: Note("Reason code of the last failure.", 253),
    lastFailureMessage: Note("Detail of the last failure.", 4096),
    lastFailureTime: When("When the last failure was recorded."),
    jobName: Note("Backup Job in flight.", 253),
  },
  { description: "Backup schedule and outcome." },
);

export const UpgradeStatusSchema = Type.Object(
  {
    targetVersion: Note("Version being rolled out.", 64),
    fromVersion: Note("Version being replaced.", 64),
    startedAt: When("When the upgrade began."),
    currentPartition: Type.Optional(
      Type.Integer({ description: "StatefulSet partition currently held.", minimum: 0, format: "int32" }),
    ),
    completedPods: Type.Optional(
      Type.Array(Type.Integer({ minimum: 0, format: "int32" }), {
        description: "Ordinals already replaced.",
        maxItems: 256,
      }),
    ),
    lastStepDownTime: When("Last leader step-down."),
    preUpgradeSnapshotJobName: Note("Snapshot Job taken before the upgrade.", 253),
    failure: Type.Optional(
      Type.Object(
        {
          reason: Note("Reason code.", 253),
          message: Note("Detail.", 4096),
          at: When("When it failed."),
        },
        { description: "Set when the rolling upgrade failed; upgrade.requests.retry clears it." },
      ),
    ),
  },
  { description: "Progress of a rolling upgrade in flight." },
);

export const BlueGreenStatusSchema = Type.Object(
  {
    phase: Type.Optional(StringEnum(BlueGreenPhases, { description: "Current blue-green phase." })),
    operationID: Note("Identifies this upgrade attempt.", 253),
    blueRevision: Note("Revision serving now.", 253),
    greenRevision: Note("Revision being brought up.", 253),
    blueImage: Note("Image of blue, pinned while green comes up.", 512),
    greenImage: Note("Image of green.", 512),
    greenVersion: Note("Version of green.", 64),
    blueReplicas: Count("Voters of blue when the upgrade started."),
    greenReplicas: Count("Voters of green."),
    manualPromotionRequired: Type.Optional(
      Type.Boolean({ description: "Promotion waits for a promote request." }),
    ),
    startTime: When("When the current phase began."),
    jobFailureCount: Count("Consecutive Job failures in this phase."),
    lastJobFailure: Note("Name of the last failed Job.", 253),
    preUpgradeSnapshotJobName: Note("Snapshot Job taken before the upgrade.", 253),
    rollbackReason: Note("Why a rollback started."),
    rollbackStartTime: When("When the rollback started."),
    rollbackAttempt: Count("Rollback attempts, which keep Job names distinct."),
  },
  { description: "Progress of a blue-green upgrade." },
);

export const UpgradeRequestsStatusSchema = Type.Object(
  {
    lastHandledRetry: Note("upgrade.requests.retry value last acted on.", 128),
    lastHandledPromote: Note("upgrade.requests.promote value last acted on.", 128),
    lastHandledRollback: Note("upgrade.requests.rollback value last acted on.", 128),
  },
  { description: "Which one-shot request values were already handled." },
);

export const BreakGlassStatusSchema = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: "Risky automation is halted until acknowledged." })),
    reason: Note("Why automation stopped.", 253),
    message: Note("What was found.", 4096),
    nonce: Note("Copy this into spec.breakGlassAck to acknowledge.", 128),
    enteredAt: When("When break glass began."),
    steps: Type.Optional(
      Type.Array(Text("A recovery step.", 1024), { description: "What to do, in order.", maxItems: 32 }),
    ),
    acknowledgedAt: When("When it was acknowledged."),
  },
  { description: "Break-glass state: set when consensus repair cannot go on safely." },
);

export const OperationLockSchema = Type.Object(
  {
    operation: Type.Optional(StringEnum(ClusterOperations, { description: "Operation holding the lock." })),
    holder: Note("Exact identity of the holder; release must match it.", 253),
    message: Note("Why the lock is held."),
    acquiredAt: When("When the lock was taken."),
    renewedAt: When("When the holder last reasserted it."),
  },
  {
    description: "Mutex for disruptive work: one upgrade, backup or restore at a time.",
    "x-kubernetes-map-type": "atomic",
  } satisfies KubeOptions,
);
export type OperationLock = Static<typeof OperationLockSchema>;

export const OpenBaoClusterStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    phase: Type.Optional(StringEnum(ClusterPhases, { description: "Summary of the cluster's state." })),
    initialized: Type.Optional(
      Type.Boolean({ description: "The cluster is initialized; scale-out may proceed." }),
    ),
    selfInitialized: Type.Optional(
      Type.Boolean({ description: "OpenBao initialized itself; no root-token Secret exists." }),
    ),
    currentVersion: Note("Version running now.", 64),
    readyReplicas: Count("Voter pods that are Ready."),
    activeLeader: Note("Pod that leads Raft.", 253),
    readReplicas: Type.Optional(
      Type.Object(
        {
          desiredReplicas: Count("Read replicas asked for."),
          readyReplicas: Count("Read replicas that are Ready."),
        },
        { description: "The read-replica pool." },
      ),
    ),
    storage: Type.Optional(
      Type.Object(
        {
          currentSize: Type.Optional(Quantity("Size every data volume has reached.")),
          expanding: Type.Optional(Type.Boolean({ description: "A volume expansion is in progress." })),
        },
        { description: "Volume expansion progress." },
      ),
    ),
    acceptedUpgradeStrategy: Type.Optional(
      StringEnum(UpgradeStrategies, {
        description: "Strategy in effect; a change waits until no upgrade runs.",
      }),
    ),
    backup: Type.Optional(BackupStatusSchema),
    upgrade: Type.Optional(UpgradeStatusSchema),
    blueGreen: Type.Optional(BlueGreenStatusSchema),
    upgradeRequests: Type.Optional(UpgradeRequestsStatusSchema),
    breakGlass: Type.Optional(BreakGlassStatusSchema),
    operationLock: Type.Optional(OperationLockSchema),
    conditions: Type.Optional(Conditions()),
  },
  { description: "What the controllers last observed and the progress of long operations." },
);
export type OpenBaoClusterStatus = Static<typeof OpenBaoClusterStatusSchema>;

export const OpenBaoClusterSchema = KindSchema(
  OpenBaoApiVersion,
  OpenBaoClusterKind,
  OpenBaoClusterSpecSchema,
  OpenBaoClusterStatusSchema,
  "OpenBaoCluster runs an OpenBao cluster on Raft storage, with its certificates, backups and upgrades.",
);
export type OpenBaoCluster = Static<typeof OpenBaoClusterSchema>;

export const OpenBaoClusterDefinition: KindDefinition = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoClusterKind,
  plural: OpenBaoClusterPlural,
  scope: "Namespaced",
  shortNames: ["bao", "baoc"],
  categories: ["openbao"],
  schema: OpenBaoClusterSchema,
  printerColumns: [
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Version", type: "string", jsonPath: ".status.currentVersion" },
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
    { name: "Replicas", type: "integer", jsonPath: ".spec.replicas", priority: 1 },
    { name: "Desired version", type: "string", jsonPath: ".spec.version", priority: 1 },
    { name: "Leader", type: "string", jsonPath: ".status.activeLeader", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
