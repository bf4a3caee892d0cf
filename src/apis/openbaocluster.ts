/**
 * OpenBaoCluster (`openbao.org/v1alpha1`): a Raft-backed OpenBao cluster with its TLS, networking,
 * initialization, backups and upgrades. Field names follow the public project the documents
 * describe, so its manifests apply here unchanged; provider-specific blocks the operator only passes
 * through to OpenBao's configuration are kept free-form.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import {
  Conditions,
  cel,
  Duration,
  IntOrString,
  KindSchema,
  type KubeOptions,
  LocalObjectReference,
  ObservedGeneration,
  Quantity,
  StringEnum,
  Timestamp,
} from "./common.js";
import type { KindDefinition } from "./crd.js";
import {
  IntOrStringQuantity,
  PodMetadata,
  PodTemplate,
  ResourceRequirementsWithClaims,
} from "./openbaocluster-pod.js";
import {
  AdditionalSubjectsSchema,
  AuditFileStorageSchema,
  ClusterRestoreStatusSchema,
  KMSSealSchema,
  MetricsOnlyListenerSchema,
  PKCS11RuntimeSchema,
  ReadReplicaStorageStatusSchema,
  RecoveryKeysSchema,
  RuntimeSchema,
  SharedCacheSchema,
  serviceMonitorFields05,
  ValidationHookStatusSchema,
  WorkloadIdentitySchema,
} from "./openbaocluster-v05.js";

export * from "./openbaocluster-names.js";

import {
  BackupProviders,
  BlueGreenPhases,
  ClusterDeletionPolicies,
  ClusterOperations,
  ClusterPhases,
  MAX_VOTERS,
  OpenBaoApiVersion,
  OpenBaoClusterKind,
  OpenBaoClusterPlural,
  OpenBaoGroup,
  OpenBaoVersion,
  SEMVER_PATTERN,
  TLS_KEY_EXCHANGE_GROUPS,
  TLS_VERSIONS,
  TLSModes,
  type UnsealType,
  UnsealTypes,
  UpgradeStrategies,
} from "./openbaocluster-names.js";

const Text = (description: string, maxLength = 253, extra: KubeOptions = {}) =>
  Type.String({ description, maxLength, ...extra });
const Image = (description: string) => Type.String({ description, maxLength: 512 });
/**
 * A string map with bounded values. Maps sit under the spec's CEL rule, and the API server prices a
 * rule by the largest value it could meet; Kubernetes caps label values at 63 characters anyway.
 */
const TextMap = (description: string, maxLength = 65536) =>
  Type.Record(Type.String(), Type.String({ maxLength }), { description });
const Labels = (description: string) => TextMap(description, 63);
/** Any JSON value, kept as given (upstream's apiextensions JSON fields). */
const AnyJSON = (description: string) =>
  Type.Unknown({ description, "x-kubernetes-preserve-unknown-fields": true } satisfies KubeOptions);

/** A free string setting passed through to OpenBao's configuration. */
const Setting = (description: string, maxLength = 1024) => Type.Optional(Text(description, maxLength));
const Int32 = (description: string, extra: KubeOptions = {}) =>
  Type.Integer({ description, format: "int32", ...extra });
const Int64 = (description: string, extra: KubeOptions = {}) =>
  Type.Integer({ description, format: "int64", ...extra });

/**
 * A reference by name, the way upstream writes it (corev1.LocalObjectReference): the name defaults
 * to "" rather than being required, so `{}` is accepted and means "none". `validate` and the
 * controllers check the name itself.
 */
export const NameReference = (description: string) =>
  Type.Object(
    {
      name: Type.Optional(
        Type.String({
          description: "Name of the referenced object, in this object's namespace.",
          default: "",
          maxLength: 253,
        }),
      ),
    },
    { description, "x-kubernetes-map-type": "atomic" } satisfies KubeOptions,
  );

/**
 * A credentials Secret by name. Upstream's samples also write a `namespace` (its CRD has none, so a
 * strict apply there refuses them, and its controllers read the Secret in the object's own namespace
 * only). It is accepted here so those manifests apply; `validate` and the reconciler refuse a namespace
 * other than the object's own, since no Secret is ever read from another namespace.
 */
export const CredentialsReference = (description: string) =>
  Type.Object(
    {
      name: Type.Optional(
        Type.String({
          description: "Name of the referenced Secret, in this object's namespace.",
          default: "",
          maxLength: 253,
        }),
      ),
      namespace: Type.Optional(
        Type.String({
          description:
            "Accepted for upstream's samples; must be this object's own namespace (the only one the Secret is read from).",
          maxLength: 63,
        }),
      ),
    },
    { description, "x-kubernetes-map-type": "atomic" } satisfies KubeOptions,
  );

/** matchLabels / matchExpressions, as metav1.LabelSelector has them. */
const LabelSelector = (description: string) =>
  Type.Object(
    {
      matchLabels: Type.Optional(Labels("Labels that must all match.")),
      matchExpressions: Type.Optional(
        Type.Array(
          Type.Object(
            {
              key: Text("Label key."),
              operator: Text("In, NotIn, Exists or DoesNotExist.", 16),
              values: Type.Optional(Type.Array(Text("A label value.", 63), { maxItems: 64 })),
            },
            { description: "One requirement." },
          ),
          { description: "Requirements that must all hold.", maxItems: 32 },
        ),
      ),
    },
    { description, "x-kubernetes-map-type": "atomic" } satisfies KubeOptions,
  );

/** One peer of a NetworkPolicy rule, in the NetworkPolicy API's shape. */
const NetworkPolicyPeer = Type.Object(
  {
    ipBlock: Type.Optional(
      Type.Object(
        {
          cidr: Text("A CIDR.", 64),
          except: Type.Optional(Type.Array(Text("A CIDR inside cidr.", 64), { maxItems: 64 })),
        },
        { description: "Addresses by CIDR." },
      ),
    ),
    namespaceSelector: Type.Optional(LabelSelector("Namespaces by label.")),
    podSelector: Type.Optional(LabelSelector("Pods by label.")),
  },
  { description: "A peer: addresses, namespaces or pods." },
);

const NetworkPolicyPort = Type.Object(
  {
    port: Type.Optional(IntOrString("Port number or name.")),
    endPort: Type.Optional(Int32("Last port of a range.")),
    protocol: Type.Optional(Text("TCP, UDP or SCTP.", 8)),
  },
  { description: "A port or port range." },
);

// Audit device settings, shared by spec.audit and by self-init's auditDevice requests.
const auditDeviceFields = {
  type: StringEnum(["file", "syslog", "socket", "http"] as const, {
    description: "Audit device type.",
    minLength: 1,
  }),
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
        headers: Type.Optional(AnyJSON("Headers sent with each entry.")),
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
};
// Each options block belongs to its own device type; shared by spec.audit and self-init's devices.
const auditBlockRules = (field: string) =>
  (["file", "http", "socket", "syslog"] as const).map((t) =>
    cel(`self.type == '${t}' || !has(self.${t}Options)`, `${field}.${t}Options belongs to type ${t} only`),
  );
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
    domain: Type.Optional(Text("The one DNS name to request a certificate for.", 253, { minLength: 1 })),
    domains: Type.Optional(
      Type.Array(Text("A DNS name."), {
        description:
          "DNS names to request a certificate for; instead of domain. With neither, <name>-acme.<namespace>.svc, the ACME Service's name (upstream's default).",
        minItems: 1,
        maxItems: 32,
      }),
    ),
    caCertSecretRef: Type.Optional(
      LocalObjectReference("Secret with the CA bundle that verifies a private ACME directory."),
    ),
    sharedCache: Type.Optional(SharedCacheSchema),
  },
  {
    description: "Issuance by OpenBao's own ACME client.",
    "x-kubernetes-validations": [
      cel(
        "!(has(self.domain) && has(self.domains) && size(self.domains) > 0)",
        "set tls.acme.domain or tls.acme.domains, not both",
      ),
    ],
  } satisfies KubeOptions,
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
      Duration("How long before expiry an operator-managed certificate is renewed.", {
        default: "720h",
        minLength: 1,
      }),
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
        "(has(self.mode) && self.mode == 'ACME') || !has(self.acme) || !has(self.acme.sharedCache)",
        "tls.acme.sharedCache belongs to tls.mode ACME only",
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
    maxTrailingLogs: Type.Optional(Int32("Log entries a peer may lag before it counts as unhealthy.")),
    minQuorum: Type.Optional(
      Int32("Voters below which Autopilot stops removing dead peers.", { minimum: 3 }),
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
        {
          format: Type.Optional(StringEnum(["standard", "json"] as const, { description: "Log format." })),
          file: Setting("File the server log is also written to."),
          pidFile: Setting("File the server writes its process id to."),
          rotateBytes: Type.Optional(Int64("Rotate the log file after this many bytes.", { minimum: 0 })),
          rotateDuration: Setting("Rotate the log file after this long.", 64),
          rotateMaxFiles: Type.Optional(Int32("Rotated log files to keep.", { minimum: 0 })),
        },
        { description: "Log output." },
      ),
    ),
    ui: Flag("Serve the web UI.", true),
    defaultLeaseTTL: Type.Optional(Duration("Default lease TTL for tokens and secrets.")),
    maxLeaseTTL: Type.Optional(Duration("Maximum lease TTL for tokens and secrets.")),
    cacheSize: Type.Optional(Int64("Cache size in entries.", { minimum: 0 })),
    disableCache: Flag("Turn the read cache off."),
    detectDeadlocks: Flag("Let OpenBao report potential lock deadlocks."),
    rawStorageEndpoint: Flag("Enable the sys/raw endpoint."),
    introspectionEndpoint: Flag("Enable the sys/internal/inspect endpoint."),
    impreciseLeaseRoleTracking: Flag("Track leases by role approximately, for large lease counts."),
    enableResponseHeaderHostname: Flag("Add the node's host name to every response."),
    enableResponseHeaderRaftNodeID: Flag("Add the node's Raft id to every response."),
    allowAuditLogPrefixing: Flag("Allow audit devices to prefix their lines."),
    unsafeAllowAPIAuditCreation: Flag("Allow creating audit devices through the API."),
    acmeCARoot: Setting("CA bundle OpenBao trusts when it talks to an ACME directory.", 65536),
    listener: Type.Optional(
      Type.Object(
        {
          tlsDisable: Flag("Serve plain HTTP on the listener."),
          proxyProtocolBehavior: Type.Optional(
            StringEnum(
              [
                "use_always",
                "use_proxy_protocol",
                "allow_any",
                "allow_authorized",
                "deny_unauthorized",
              ] as const,
              {
                description:
                  "How the listener treats the PROXY protocol header. use_proxy_protocol (the name upstream's samples use) means use_always. allow_authorized and deny_unauthorized trust it only from proxyProtocolAuthorizedAddrs; allow_any is upstream's name with no OpenBao equivalent and is refused.",
              },
            ),
          ),
          proxyProtocolAuthorizedAddrs: Type.Optional(
            Type.Array(Text("An IP address or CIDR of a trusted proxy.", 64), {
              description:
                "Proxies whose PROXY protocol header the listener trusts (OpenBao's proxy_protocol_authorized_addrs); required by allow_authorized and deny_unauthorized.",
              maxItems: 64,
            }),
          ),
          tlsMinVersion: Type.Optional(
            StringEnum(TLS_VERSIONS, {
              description:
                "Oldest TLS version the API and metrics listeners accept (OpenBao's tls_min_version; its default is tls12).",
            }),
          ),
          tlsMaxVersion: Type.Optional(
            StringEnum(TLS_VERSIONS, {
              description:
                "Newest TLS version the API and metrics listeners accept (OpenBao's tls_max_version; its default is tls13).",
            }),
          ),
          tlsKeyExchangePreferences: Type.Optional(
            Type.Array(StringEnum(TLS_KEY_EXCHANGE_GROUPS), {
              description:
                "Key exchange groups the listeners allow (OpenBao's tls_key_exchange_preferences, OpenBao 2.7.0 or newer). Hybrid post-quantum groups alone need tlsMinVersion tls13; adding a classical group lets classical clients in.",
              minItems: 1,
              maxItems: TLS_KEY_EXCHANGE_GROUPS.length,
              "x-kubernetes-list-type": "set",
            }),
          ),
        },
        {
          description:
            "Settings of the API listener (the TLS policy also applies to the metrics-only listener).",
          "x-kubernetes-validations": [
            cel(
              "!(has(self.tlsMinVersion) && has(self.tlsMaxVersion) && self.tlsMinVersion == 'tls13' && self.tlsMaxVersion == 'tls12')",
              "tlsMaxVersion must be greater than or equal to tlsMinVersion",
              { fieldPath: ".tlsMaxVersion" },
            ),
            cel(
              "!has(self.tlsKeyExchangePreferences) || self.tlsKeyExchangePreferences.exists(g, g in ['X25519', 'CurveP256', 'CurveP384', 'CurveP521']) || (has(self.tlsMinVersion) && self.tlsMinVersion == 'tls13')",
              "tlsKeyExchangePreferences with only hybrid post-quantum groups requires tlsMinVersion tls13",
              { fieldPath: ".tlsMinVersion" },
            ),
          ],
        },
      ),
    ),
    plugin: Type.Optional(
      Type.Object(
        {
          autoDownload: Flag("Download declared plugins that are missing."),
          autoRegister: Flag("Register declared plugins in the catalog."),
          downloadBehavior: Type.Optional(
            StringEnum(["standard", "direct", "fail", "continue"] as const, {
              description:
                "What a failed plugin download does: fail (OpenBao's default) keeps the server from starting, continue starts it without the plugin. Upstream's standard and direct, which OpenBao itself does not know, mean fail.",
            }),
          ),
          filePermissions: Setting("File mode plugin binaries must have.", 8),
          fileUID: Type.Optional(Int64("User that must own plugin binaries.")),
        },
        { description: "How OpenBao finds and registers plugins." },
      ),
    ),
    raft: Type.Optional(
      Type.Object(
        {
          performanceMultiplier: Type.Optional(
            Int32("Scales Raft timing; higher is more tolerant.", { minimum: 0 }),
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

const telemetryStrings = [
  "circonusAPIApp",
  "circonusAPIKey",
  "circonusAPIURL",
  "circonusBrokerID",
  "circonusBrokerSelectTag",
  "circonusCheckDisplayName",
  "circonusCheckForceMetricActivation",
  "circonusCheckID",
  "circonusCheckInstanceID",
  "circonusCheckSearchTag",
  "circonusCheckTags",
  "circonusSubmissionInterval",
  "dogStatsdAddress",
  "leaseMetricsEpsilon",
  "metricsPrefix",
  "prometheusRetentionTime",
  "stackdriverLocation",
  "stackdriverNamespace",
  "stackdriverProjectID",
  "statsdAddress",
  "statsiteAddress",
  "usageGaugePeriod",
] as const;

export const TelemetrySchema = Type.Object(
  {
    ...(Object.fromEntries(
      telemetryStrings.map((name) => [name, Setting(`OpenBao telemetry setting ${name}.`)]),
    ) as Record<(typeof telemetryStrings)[number], ReturnType<typeof Setting>>),
    disableHostname: Flag("Do not prefix gauge names with the host name."),
    enableHostnameLabel: Flag("Add the host name as a label instead."),
    stackdriverDebugLogs: Flag("Log what is sent to Stackdriver."),
    dogStatsdTags: Type.Optional(
      Type.Array(Text("A tag, key:value."), { description: "Tags added to every metric.", maxItems: 64 }),
    ),
    maximumGaugeCardinality: Type.Optional(Int32("Most distinct label sets a gauge may have.")),
  },
  { description: "OpenBao's telemetry stanza." },
);

export const PluginSchema = Type.Object(
  {
    type: Text("Plugin type: secret, auth, database or kms.", 64, { minLength: 1 }),
    name: Text("Name the plugin is registered under.", 253, { minLength: 1 }),
    version: Text("Plugin version.", 64, { minLength: 1 }),
    binaryName: Text("Name of the binary in the plugin directory.", 253, { minLength: 1 }),
    sha256sum: Type.String({
      description: "SHA-256 of the binary, hex.",
      minLength: 64,
      maxLength: 64,
      pattern: "^[0-9a-fA-F]{64}$",
    }),
    image: Type.Optional(Image("OCI image the binary comes from.")),
    command: Setting("Command to run instead of the binary name.", 1024),
    args: Type.Optional(Type.Array(Text("Argument.", 4096), { maxItems: 64 })),
    env: Type.Optional(Type.Array(Text("NAME=value.", 4096), { maxItems: 64 })),
  },
  { description: "A plugin OpenBao registers from its configuration." },
);

const ImageVerificationSchema = (description: string) =>
  Type.Object(
    {
      enabled: Type.Boolean({ description: "Verify image signatures before use." }),
      failurePolicy: StringEnum(["Warn", "Block"] as const, {
        description: "What a failed verification does.",
        default: "Block",
      }),
      ignoreTlog: Flag("Skip the transparency log check.", false),
      publicKey: Setting("PEM public key the signature must verify against.", 16384),
      issuer: Setting("OIDC issuer of a keyless signature.", 2048),
      subject: Setting("Subject of a keyless signature.", 2048),
      issuerRegExp: Setting("Pattern the OIDC issuer of a keyless signature must match.", 2048),
      subjectRegExp: Setting("Pattern the subject of a keyless signature must match.", 2048),
      imagePullSecrets: Type.Optional(
        Type.Array(NameReference("A pull Secret."), {
          description: "Secrets to read signatures with.",
          maxItems: 16,
        }),
      ),
    },
    { description },
  );

const SeLinuxOptions = Type.Object(
  {
    level: Setting("SELinux level.", 253),
    role: Setting("SELinux role.", 253),
    type: Setting("SELinux type.", 253),
    user: Setting("SELinux user.", 253),
  },
  { description: "SELinux context." },
);

const ProfileRef = (description: string) =>
  Type.Object(
    {
      type: Text("RuntimeDefault, Localhost or Unconfined.", 32),
      localhostProfile: Setting("Profile on the node, for type Localhost.", 253),
    },
    { description },
  );

export const PodSecurityContextSchema = Type.Object(
  {
    runAsUser: Type.Optional(Int64("User id.")),
    runAsGroup: Type.Optional(Int64("Group id.")),
    runAsNonRoot: Flag("Refuse to start as root."),
    fsGroup: Type.Optional(Int64("Group owning mounted volumes.")),
    fsGroupChangePolicy: Setting("OnRootMismatch or Always.", 32),
    supplementalGroups: Type.Optional(
      Type.Array(Type.Integer({ format: "int64" }), { description: "Extra groups.", maxItems: 64 }),
    ),
    supplementalGroupsPolicy: Setting("Merge or Strict.", 32),
    seLinuxOptions: Type.Optional(SeLinuxOptions),
    seLinuxChangePolicy: Setting("MountOption or Recursive.", 32),
    seccompProfile: Type.Optional(ProfileRef("Seccomp profile.")),
    appArmorProfile: Type.Optional(ProfileRef("AppArmor profile.")),
    sysctls: Type.Optional(
      Type.Array(
        Type.Object(
          { name: Text("Sysctl name."), value: Text("Value.", 1024) },
          { description: "A sysctl." },
        ),
        { description: "Namespaced sysctls.", maxItems: 32 },
      ),
    ),
    windowsOptions: Type.Optional(
      Type.Object(
        {
          gmsaCredentialSpec: Setting("GMSA credential spec.", 65536),
          gmsaCredentialSpecName: Setting("GMSA credential spec name.", 253),
          hostProcess: Flag("Run as a host process."),
          runAsUserName: Setting("User name.", 253),
        },
        { description: "Windows settings." },
      ),
    ),
  },
  { description: "Pod security context of the OpenBao pods; the operator's hardened one when unset." },
);

// ---------------------------------------------------------------- networking

export const ServiceSchema = Type.Object(
  {
    type: Type.Optional(
      Text("Type of the client Service (ClusterIP, NodePort or LoadBalancer); ClusterIP when unset.", 32),
    ),
    annotations: Type.Optional(TextMap("Annotations added to the client Service.")),
    labels: Type.Optional(Labels("Labels added to the client Service.")),
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
    path: Type.Optional(Text("Path routed to OpenBao; / when unset.", 1024)),
    pathType: Type.Optional(
      StringEnum(["Prefix", "Exact", "ImplementationSpecific"] as const, {
        description: "How the path matches.",
        default: "Prefix",
      }),
    ),
    className: Type.Optional(Text("IngressClass to use.")),
    annotations: Type.Optional(TextMap("Annotations added to the Ingress.")),
    tlsSecretName: Type.Optional(Text("TLS Secret for the Ingress; the cluster's own when unset.")),
    readinessMode: Type.Optional(
      StringEnum(["Created", "LoadBalancerPublished"] as const, {
        description:
          "When the Ingress counts as ready: once created, or once its load balancer address is published.",
        default: "LoadBalancerPublished",
      }),
    ),
  },
  { description: "An Ingress in front of the client Service." },
);

export const GatewaySchema = Type.Object(
  {
    enabled: Type.Boolean({ description: "Manage a route on an existing Gateway." }),
    gatewayRef: Type.Object(
      {
        name: Text("Gateway name.", 253, { minLength: 1 }),
        namespace: Type.Optional(Text("Gateway namespace; this object's when unset.")),
      },
      { description: "The Gateway the route attaches to." },
    ),
    hostname: Text("Host name the route matches.", 253, { minLength: 1 }),
    listenerName: Type.Optional(Text("Listener (sectionName) on the Gateway.")),
    path: Type.Optional(Text("Path prefix of the route; / when unset.", 1024)),
    tlsPassthrough: Flag("Use a TLSRoute and let OpenBao terminate TLS."),
    annotations: Type.Optional(TextMap("Annotations added to the route.")),
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

const Peers = Type.Optional(
  Type.Array(NetworkPolicyPeer, { description: "Peers the rule allows; any when unset.", maxItems: 32 }),
);
const Ports = Type.Optional(
  Type.Array(NetworkPolicyPort, { description: "Ports the rule allows; all when unset.", maxItems: 32 }),
);
const NetworkPolicyRules = <T extends TSchema>(description: string, rule: T) =>
  Type.Array(rule, { description, maxItems: 32 });
const IngressRule = Type.Object(
  { from: Peers, ports: Ports },
  { description: "A NetworkPolicy ingress rule." },
);
const EgressRule = Type.Object({ to: Peers, ports: Ports }, { description: "A NetworkPolicy egress rule." });

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
      NetworkPolicyRules("Extra ingress rules merged into the managed NetworkPolicy.", IngressRule),
    ),
    egressRules: Type.Optional(
      NetworkPolicyRules("Extra egress rules merged into the managed NetworkPolicy.", EgressRule),
    ),
    trustedIngressPeers: Type.Optional(
      Type.Array(NetworkPolicyPeer, {
        description:
          "Peers (e.g. the ingress controller) allowed to reach the API port through the NetworkPolicy.",
        maxItems: 32,
      }),
    ),
    dnsEndpointIPs: Type.Optional(
      Type.Array(Text("An IP address.", 64), {
        description: "Addresses of the cluster DNS endpoints, for the egress policy.",
        maxItems: 16,
      }),
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
      AnyJSON("Request body. Stored in the object and in etcd: never put secret values here."),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String({ maxLength: 8192 }), { maxItems: 32 }), {
        description: "HTTP headers sent with the request (OpenBao 2.6+).",
      }),
    ),
    when: Type.Optional(AnyJSON("Condition under which the request runs (OpenBao 2.6+).")),
    auditDevice: Type.Optional(
      Type.Object(auditDeviceFields, {
        description: "Structured body for sys/audit/* paths.",
        "x-kubernetes-validations": [
          cel("self.type != 'file' || has(self.fileOptions)", "auditDevice type file needs fileOptions"),
          cel("self.type != 'http' || has(self.httpOptions)", "auditDevice type http needs httpOptions"),
          ...auditBlockRules("auditDevice"),
        ],
      } satisfies KubeOptions),
    ),
    authMethod: Type.Optional(
      Type.Object(
        {
          type: Text("Auth method type, e.g. kubernetes.", 128, { minLength: 1 }),
          description: Type.Optional(Text("Description of the mount.", 1024)),
          config: Type.Optional(TextMap("Mount tuning, e.g. default_lease_ttl.")),
        },
        { description: "Structured body for sys/auth/* paths." },
      ),
    ),
    secretEngine: Type.Optional(
      Type.Object(
        {
          type: Text("Secrets engine type, e.g. kv.", 128, { minLength: 1 }),
          description: Type.Optional(Text("Description of the mount.", 1024)),
          options: Type.Optional(TextMap('Engine options, e.g. version: "2".')),
        },
        { description: "Structured body for sys/mounts/* paths." },
      ),
    ),
    policy: Type.Optional(
      Type.Object(
        { policy: Text("The policy document (HCL).", 65536, { minLength: 1 }) },
        { description: "Structured body for sys/policies/* paths." },
      ),
    ),
    allowFailure: Flag("Let initialization go on when this request fails."),
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
          additionalSubjects: Type.Optional(AdditionalSubjectsSchema),
        },
        {
          description: "JWT auth for the operator; it does not give users access.",
          "x-kubernetes-validations": [
            cel(
              "!has(self.additionalSubjects) || self.enabled",
              "selfInit.oidc.additionalSubjects needs enabled: true",
            ),
          ],
        } satisfies KubeOptions,
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
    type: Type.Optional(
      StringEnum(UnsealTypes, {
        description: "Seal mechanism. static is the operator-managed key and needs no block.",
        default: "static",
      }),
    ),
    static: Type.Optional(
      Type.Object(
        {
          currentKey: Type.Optional(Text("Location of the static key.", 1024)),
          currentKeyID: Type.Optional(Text("Identifier of the static key.")),
        },
        { description: "Overrides for the operator-managed static seal." },
      ),
    ),
    transit: Type.Optional(
      Type.Object(
        {
          address: Text("Address of the OpenBao holding the transit key.", 2048, { minLength: 1 }),
          mountPath: Text("Mount path of the transit engine.", 253, { minLength: 1 }),
          keyName: Text("Transit key name.", 253, { minLength: 1 }),
          namespace: Setting("OpenBao namespace of the mount.", 253),
          token: Setting("Token; prefer credentialsSecretRef, the spec is not secret.", 4096),
          disableRenewal: Flag("Do not renew the token."),
          tlsCACert: Setting("CA file path.", 1024),
          tlsClientCert: Setting("Client certificate file path.", 1024),
          tlsClientKey: Setting("Client key file path.", 1024),
          tlsServerName: Setting("Server name to verify.", 253),
          tlsSkipVerify: Flag("Skip TLS verification. Development only."),
        },
        { description: "Transit seal settings." },
      ),
    ),
    awskms: Type.Optional(
      Type.Object(
        {
          region: Text("AWS region.", 64, { minLength: 1 }),
          kmsKeyID: Text("KMS key id or ARN.", 2048, { minLength: 1 }),
          endpoint: Setting("KMS endpoint override.", 2048),
          accessKey: Setting("Access key; prefer credentialsSecretRef.", 256),
          secretKey: Setting("Secret key; prefer credentialsSecretRef.", 256),
          sessionToken: Setting("Session token; prefer credentialsSecretRef.", 4096),
        },
        { description: "AWS KMS seal settings." },
      ),
    ),
    gcpCloudKMS: Type.Optional(
      Type.Object(
        {
          project: Text("GCP project.", 253, { minLength: 1 }),
          region: Text("Key ring location.", 64, { minLength: 1 }),
          keyRing: Text("Key ring.", 253, { minLength: 1 }),
          cryptoKey: Text("Crypto key.", 253, { minLength: 1 }),
          credentials: Setting("Path of the credentials file.", 1024),
        },
        { description: "GCP Cloud KMS seal settings." },
      ),
    ),
    azureKeyVault: Type.Optional(
      Type.Object(
        {
          vaultName: Text("Key Vault name.", 253, { minLength: 1 }),
          keyName: Text("Key name.", 253, { minLength: 1 }),
          tenantID: Setting("Tenant id.", 64),
          clientID: Setting("Client id.", 64),
          clientSecret: Setting("Client secret; prefer credentialsSecretRef.", 1024),
          environment: Setting("Azure cloud environment.", 64),
          resource: Setting("Key Vault resource host.", 253),
        },
        { description: "Azure Key Vault seal settings." },
      ),
    ),
    kmip: Type.Optional(
      Type.Object(
        {
          endpoint: Type.Optional(Text("KMIP server address.", 2048, { minLength: 1 })),
          kmsKeyID: Type.Optional(Text("Id of the key on the KMIP server.", 2048, { minLength: 1 })),
          clientCert: Type.Optional(Text("Client certificate file path.", 1024, { minLength: 1 })),
          clientKey: Type.Optional(Text("Client key file path.", 1024, { minLength: 1 })),
          caCert: Setting("CA file path.", 1024),
          serverName: Setting("Server name to verify.", 253),
          encryptAlg: Type.Optional(
            StringEnum(["AES_GCM", "RSA_OAEP_SHA256", "RSA_OAEP_SHA384", "RSA_OAEP_SHA512"] as const, {
              description: "Encryption algorithm.",
            }),
          ),
          timeout: Type.Optional(Int32("Request timeout in seconds.", { minimum: 1 })),
          tls12Ciphers: Setting("TLS 1.2 cipher suites, comma separated.", 4096),
          disabled: Flag("Mark the seal disabled (seal migration)."),
          address: Type.Optional(Text("Earlier name of endpoint.", 2048, { minLength: 1 })),
          certificate: Setting("Earlier name of clientCert.", 1024),
          key: Setting("Earlier name of clientKey.", 1024),
          tlsServerName: Setting("Earlier name of serverName.", 253),
          tlsSkipVerify: Flag("Earlier setting with no OpenBao equivalent; refused when true."),
        },
        {
          description:
            "KMIP seal settings. endpoint, kmsKeyID, clientCert and clientKey are required, unless the block is written with the earlier address form.",
          "x-kubernetes-validations": [
            cel(
              "has(self.address) || (has(self.endpoint) && has(self.kmsKeyID) && has(self.clientCert) && has(self.clientKey))",
              "unseal.kmip needs endpoint, kmsKeyID, clientCert and clientKey",
            ),
          ],
        } satisfies KubeOptions,
      ),
    ),
    ocikms: Type.Optional(
      Type.Object(
        {
          keyID: Text("OCI key id.", 2048, { minLength: 1 }),
          cryptoEndpoint: Text("Crypto endpoint.", 2048, { minLength: 1 }),
          managementEndpoint: Text("Management endpoint.", 2048, { minLength: 1 }),
          authTypeAPIKey: Flag(
            "Log in with an API key (from unseal.credentialsSecretRef) instead of the instance principal.",
          ),
          disabled: Flag("Mark the seal disabled (seal migration)."),
          authType: Setting("Earlier form of authTypeAPIKey: apikey or instanceprincipal.", 64),
          compartmentID: Setting("Earlier setting; the compartment is implied by the key.", 2048),
        },
        { description: "OCI KMS seal settings." },
      ),
    ),
    pkcs11: Type.Optional(
      Type.Object(
        {
          lib: Text("Path of the PKCS#11 library.", 1024, { minLength: 1 }),
          keyLabel: Text("Label of the key.", 253, { minLength: 1 }),
          keyID: Setting("Id of the key.", 253),
          slot: Setting("Slot number; set it or tokenLabel.", 64),
          tokenLabel: Setting("Label of the token; set it or slot.", 253),
          pin: Setting("PIN; prefer credentialsSecretRef.", 256),
          mechanism: Setting("Encryption mechanism.", 64),
          disableSoftwareEncryption: Flag("Encrypt on the HSM instead of in software."),
          disabled: Flag("Mark the seal disabled (seal migration)."),
          rsaOAEPHash: Type.Optional(
            StringEnum(["sha1", "sha224", "sha256", "sha384", "sha512"] as const, {
              description: "Hash for RSA-OAEP.",
            }),
          ),
          runtime: Type.Optional(PKCS11RuntimeSchema),
          hmacKeyLabel: Setting("Earlier setting with no OpenBao equivalent; refused when set.", 253),
          generateKey: Flag("Earlier setting with no OpenBao equivalent; refused when set."),
          rsaEncryptLocal: Flag("Earlier setting with no OpenBao equivalent; refused when set."),
        },
        {
          // Upstream 0.5 also requires slot or tokenLabel; earlier manifests name neither (the
          // library's default token). They are admitted with a warning.
          description: "PKCS#11 seal settings.",
          "x-kubernetes-validations": [
            cel(
              "!(has(self.slot) && size(self.slot) > 0 && has(self.tokenLabel) && size(self.tokenLabel) > 0)",
              "unseal.pkcs11 takes slot or tokenLabel, not both",
            ),
          ],
        } satisfies KubeOptions,
      ),
    ),
    kms: Type.Optional(KMSSealSchema),
    credentialsSecretRef: Type.Optional(CredentialsReference("Secret mounted for the seal's credentials.")),
  },
  {
    description: "Auto-unseal. The operator-managed static seal when omitted.",
    "x-kubernetes-validations": [
      cel("self.type == 'static' || !has(self.static)", "unseal.static belongs to unseal.type static only"),
      ...unsealRules,
      // An OCI seal reads credentials from a Secret only with API-key auth.
      cel(
        "self.type != 'ocikms' || !has(self.credentialsSecretRef) || (has(self.ocikms) && ((has(self.ocikms.authTypeAPIKey) && self.ocikms.authTypeAPIKey) || (has(self.ocikms.authType) && self.ocikms.authType.lowerAscii().replace('_', '') == 'apikey')))",
        "unseal.credentialsSecretRef with unseal.type ocikms needs ocikms.authTypeAPIKey: true",
      ),
    ],
  } satisfies KubeOptions,
);

export const AuditDeviceSchema = Type.Object(
  {
    ...auditDeviceFields,
    path: Text("Mount path of the device; unique in the list.", 253, { minLength: 1 }),
    options: Type.Optional(AnyJSON("Raw device options, for what the structured blocks do not cover.")),
  },
  { description: "A declarative audit device.", "x-kubernetes-validations": auditBlockRules("audit[]") },
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
      CredentialsReference("Secret with the object store credentials, in the namespace of this object."),
    ),
    region: Type.Optional(Text("Region for S3-compatible clients.", 64, { default: "us-east-1" })),
    concurrency: Type.Optional(
      Int32("Parts uploaded or downloaded at once.", { minimum: 1, maximum: 10, default: 3 }),
    ),
    partSize: Type.Optional(
      Int64("Bytes per part of a multipart transfer.", { minimum: 5242880, default: 10485760 }),
    ),
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
          storageAccount: Type.Optional(Text("Storage account name.", 253, { minLength: 1 })),
          container: Type.Optional(Text("Blob container name.")),
        },
        { description: "For provider azure." },
      ),
    ),
    workloadIdentity: Type.Optional(WorkloadIdentitySchema),
  },
  {
    // Upstream 0.5 also requires endpoint for provider s3. Earlier manifests leave it out for AWS
    // itself (the region's endpoint); they are admitted with a warning.
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
      cel(
        "!has(self.provider) || self.provider == 's3' || !has(self.roleArn) || size(self.roleArn) == 0",
        "target.roleArn belongs to provider s3 only",
      ),
    ],
  } satisfies KubeOptions,
);
export type BackupTarget = Static<typeof BackupTargetSchema>;

/**
 * Restore tests ("drills"): the latest backup restored into a throwaway one-pod cluster beside the
 * source, checked, and deleted. Upstream names the field spec.backup.restoreTest in its design; the
 * shape below is this operator's own (upstream published none yet).
 */
export const RestoreTestSchema = Type.Object(
  {
    enabled: Flag("Run restore tests.", true),
    schedule: Type.Optional(
      Text("Cron schedule of the tests; unset: each new backup is tested once, after it is taken.", 128, {
        minLength: 1,
      }),
    ),
    canary: Type.Optional(
      Type.Object(
        {
          path: Text(
            'API path read from the restored data, e.g. "kv/data/restore-canary"; the test fails unless it answers with data.',
            512,
            { minLength: 1, pattern: "^[A-Za-z0-9_.\\-/]+$" },
          ),
          tokenSecretRef: Type.Optional(
            NameReference(
              "Secret (key token) with a token of the source cluster that may read the path; spec.backup.tokenSecretRef when unset.",
            ),
          ),
        },
        { description: "A path written before the backup, read back from the restored data." },
      ),
    ),
    timeout: Type.Optional(
      Duration("How long one test may take, throwaway cluster included, before it fails (default 30m)."),
    ),
  },
  { description: "Periodic restore tests of the latest backup into a throwaway cluster." },
);

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
    tokenSecretRef: Type.Optional(NameReference("Secret with an OpenBao token, when no JWT role is set.")),
    image: Type.Optional(Image("Executor image for backup Jobs.")),
    restoreTest: Type.Optional(RestoreTestSchema),
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
      Int32("Consecutive Job failures before giving up.", { minimum: 1, default: 5 }),
    ),
    preUpgradeSnapshot: Flag("Take a snapshot before starting."),
    verification: Type.Optional(
      Type.Object(
        {
          minSyncDuration: Type.Optional(Duration("How long green must stay healthy before promotion.")),
          prePromotionHook: Type.Optional(
            Type.Object(
              {
                image: Text("Image of the validation Job.", 512, { minLength: 1 }),
                command: Type.Optional(Type.Array(Text("Argument.", 4096), { maxItems: 64 })),
                args: Type.Optional(Type.Array(Text("Argument.", 4096), { maxItems: 64 })),
                timeoutSeconds: Type.Optional(Int32("Job timeout.", { default: 300 })),
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
    preUpgradeSnapshot: Flag("Take a snapshot (with spec.backup's target) before upgrading."),
    jwtAuthRole: Type.Optional(Text("OpenBao JWT role the upgrade Jobs log in with.")),
    // Refused below; kept in the schema so a value stored before the refusal survives (validation
    // ratcheting) and is still read.
    tokenSecretRef: Type.Optional(
      Type.Object({ name: Type.Optional(Text("Name of the Secret.", 253, { default: "" })) }, {
        description:
          "Refused (upstream refuses it since 0.1.0): use jwtAuthRole. A value stored before is still read.",
        "x-kubernetes-preserve-unknown-fields": true,
      } satisfies KubeOptions),
    ),
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
  {
    description: "How upgrades run.",
    // Upstream refuses a token Secret for upgrades since 0.1.0 (and dropped the field in 0.5). It
    // stays in the schema so an object stored before keeps reading (validation ratcheting lets an
    // unchanged value through); new values are refused, naming the replacement.
    "x-kubernetes-validations": [
      cel(
        "!has(self.tokenSecretRef)",
        "spec.upgrade.tokenSecretRef is not supported (upstream refuses it since 0.1.0): set spec.upgrade.jwtAuthRole, or enable spec.selfInit.oidc, whose bootstrap creates the upgrade role",
        { fieldPath: ".tokenSecretRef" },
      ),
    ],
  },
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
      Type.Array(NameReference("A pull Secret."), {
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
      Int32(
        `Voters. Capped at one until the cluster is initialized. At least 1, as upstream; at most ${MAX_VOTERS}, this operator's bound: every Raft write waits for a majority of the voters, so more add latency and no availability worth having (read replicas scale reads).`,
        { minimum: 1, maximum: MAX_VOTERS, default: 3 },
      ),
    ),
    podMetadata: Type.Optional(PodMetadata("Labels and annotations added to every OpenBao pod.")),
    resources: Type.Optional(
      ResourceRequirementsWithClaims("Resources of each voter's OpenBao container (read replicas apart)."),
    ),
    readReplicas: Type.Optional(
      Type.Object(
        {
          replicas: Type.Optional(
            Type.Integer({
              description: "Non-voting read replicas; none when unset.",
              minimum: 0,
              format: "int32",
            }),
          ),
          storage: Type.Optional(
            Type.Object(
              {
                size: Type.Optional(
                  IntOrStringQuantity("Volume size of read replicas; the voters' when unset."),
                ),
                storageClassName: Type.Optional(Text("StorageClass of read-replica volumes.")),
              },
              { description: "Storage overrides for read replicas." },
            ),
          ),
          resources: Type.Optional(
            ResourceRequirementsWithClaims(
              "Resources of each read replica's container (this operator's name; template.resources is upstream's).",
            ),
          ),
          template: Type.Optional(PodTemplate("Overrides for the read-replica pods.")),
          service: Type.Optional(
            Type.Object(
              {
                enabled: Flag("Create a Service for read traffic."),
                type: Type.Optional(Text("Service type (ClusterIP, NodePort or LoadBalancer).", 32)),
                annotations: Type.Optional(TextMap("Annotations of the read Service.")),
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
    paused: Flag("Stop reconciling everything but deletion."),
    deletionPolicy: Type.Optional(
      StringEnum(ClusterDeletionPolicies, {
        description:
          "What goes with the object: Retain (when unset) keeps volumes; DeletePVCs and DeleteAll remove them. Backups in object storage are never deleted.",
      }),
    ),
    telemetry: Type.Optional(TelemetrySchema),
    plugins: Type.Optional(
      Type.Array(PluginSchema, { description: "Plugins declared in OpenBao's configuration.", maxItems: 64 }),
    ),
    serviceAccount: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Text("Name of the ServiceAccount; derived from the cluster when unset.")),
          annotations: Type.Optional(TextMap("Annotations added to the ServiceAccount.")),
        },
        { description: "The ServiceAccount the OpenBao pods run as." },
      ),
    ),
    securityContext: Type.Optional(PodSecurityContextSchema),
    workloadHardening: Type.Optional(
      Type.Object(
        { appArmorEnabled: Flag("Run the pods under the runtime's default AppArmor profile.") },
        { description: "Extra hardening of the pods." },
      ),
    ),
    initContainer: Type.Optional(
      Type.Object(
        {
          enabled: Flag("Run the init container that prepares configuration.", true),
          image: Type.Optional(Image("Image of the init container.")),
        },
        { description: "The init container of the OpenBao pods." },
      ),
    ),
    maintenance: Type.Optional(
      Type.Object(
        {
          enabled: Flag("Mark the cluster's objects as under maintenance."),
          restartAt: Type.Optional(
            Text(
              "Earlier name of spec.runtime.restartAt (removed upstream in 0.5); still accepted and mapped to it.",
              253,
              {
                minLength: 1,
              },
            ),
          ),
        },
        { description: "Planned maintenance." },
      ),
    ),
    runtime: Type.Optional(RuntimeSchema),
    recoveryKeys: Type.Optional(RecoveryKeysSchema),
    auditFileStorage: Type.Optional(AuditFileStorageSchema),
    observability: Type.Optional(
      Type.Object(
        {
          metrics: Type.Optional(
            Type.Object(
              {
                enabled: Type.Boolean({
                  description: "Expose OpenBao's Prometheus metrics.",
                  default: false,
                }),
                scrapeProfile: Type.Optional(
                  StringEnum(["Active", "AllNodes"] as const, {
                    description: "Scrape the active node only, or every node.",
                    default: "Active",
                  }),
                ),
                metricsOnlyListener: Type.Optional(MetricsOnlyListenerSchema),
                serviceMonitor: Type.Optional(
                  Type.Object(
                    {
                      enabled: Type.Boolean({ description: "Create a ServiceMonitor.", default: true }),
                      interval: Type.Optional(Duration("Scrape interval.", { default: "30s" })),
                      scrapeTimeout: Type.Optional(Duration("Scrape timeout.", { default: "10s" })),
                      ...serviceMonitorFields05,
                    },
                    { description: "A Prometheus Operator ServiceMonitor." },
                  ),
                ),
              },
              { description: "Metrics scraping." },
            ),
          ),
        },
        { description: "Monitoring of the OpenBao pods." },
      ),
    ),
    imageVerification: Type.Optional(ImageVerificationSchema("Signature checks of the OpenBao image.")),
    operatorImageVerification: Type.Optional(
      ImageVerificationSchema("Signature checks of the operator's executor and helper images."),
    ),
    restore: Type.Optional(
      Type.Object(
        { jwtAuthRole: Type.Optional(Text("OpenBao JWT role restore Jobs log in with.")) },
        { description: "Defaults for OpenBaoRestores of this cluster." },
      ),
    ),
    breakGlassAck: Type.Optional(
      Text("Set to status.breakGlass.nonce to acknowledge break glass and let automation resume.", 128),
    ),
  },
  // Upstream also has a spec-level rule requiring tls.rotationPeriod in OperatorManaged mode. Here tls
  // and the period are defaulted and an empty period fails its own pattern, so the outcome is the same.
  {
    description: "The cluster to run.",
    "x-kubernetes-validations": [
      cel(
        "!has(self.recoveryKeys) || !has(self.recoveryKeys.initial) || (has(self.selfInit) && self.selfInit.enabled)",
        "recoveryKeys.initial needs selfInit.enabled: true",
      ),
      cel(
        "!has(self.recoveryKeys) || !has(self.recoveryKeys.initial) || (has(self.unseal) && has(self.unseal.type) && self.unseal.type != 'static')",
        "recoveryKeys.initial needs an auto-unseal (unseal.type other than static)",
      ),
      // Upstream 0.5 also refuses ACME with more than one serving pod and no tls.acme.sharedCache.
      // Earlier manifests (upstream's own ACME sample among them) have no shared cache; they are
      // admitted with a warning (targets/openbao/upstream-refusals.ts), each pod keeping its own cache.
    ],
  } satisfies KubeOptions,
);
export type OpenBaoClusterSpec = Static<typeof OpenBaoClusterSpecSchema>;

// ---------------------------------------------------------------- status

const Count = (description: string) =>
  Type.Optional(Type.Integer({ description, minimum: 0, format: "int32" }));
const When = (description: string) => Type.Optional(Timestamp(description));
const Note = (description: string, maxLength = 1024) => Type.Optional(Text(description, maxLength));

const LastError = Type.Object(
  {
    reason: Note("Reason code.", 253),
    message: Note("Detail.", 4096),
    at: When("When it happened."),
  },
  { description: "The last error a controller met." },
);

export const BackupStatusSchema = Type.Object(
  {
    lastBackupTime: When("Last successful backup; a later failure leaves it alone."),
    lastAttemptTime: When("Last attempt, whatever its outcome."),
    lastAttemptScheduledTime: When("Schedule window of the last attempt; one attempt per window."),
    lastHandledManualTrigger: Note("Last trigger-backup annotation value acted on.", 253),
    nextScheduledBackup: When("Next scheduled run."),
    lastBackupKey: Note("Object key of the last successful snapshot."),
    lastBackupName: Note(
      "Name of the last successful snapshot (upstream's field; the key's last part).",
      1024,
    ),
    lastBackupSize: Type.Optional(
      Type.Integer({ description: "Bytes in the last snapshot.", minimum: 0, format: "int64" }),
    ),
    lastBackupDuration: Note("How long the last backup took.", 64),
    consecutiveFailures: Count("Failures since the last success."),
    lastFailureReason: Note("Reason code of the last failure.", 253),
    lastFailureMessage: Note("Detail of the last failure.", 4096),
    lastFailureTime: When("When the last failure was recorded."),
    jobName: Note("Backup Job in flight.", 253),
    lastVerifiedTime: When("When the last restore test that passed ended (spec.backup.restoreTest)."),
    lastVerifiedBackupKey: Note("Object key of the snapshot the last passing restore test restored."),
    lastVerificationTime: When("When the last restore test ended, whatever its outcome."),
    lastVerificationBackupKey: Note("Object key the last restore test restored, whatever its outcome."),
    lastVerificationScheduledTime: When("Schedule window of the last restore test; one test per window."),
    lastVerificationFailureReason: Note("Reason code of the last restore test, when it failed.", 253),
    lastVerificationFailureMessage: Note("Detail of the last restore test, when it failed.", 4096),
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
    lastErrorReason: Note("Reason code of the last error (upstream's field).", 253),
    lastErrorMessage: Note("Detail of the last error (upstream's field).", 4096),
    lastErrorAt: When("When the last error happened (upstream's field)."),
    consecutiveFailures: Type.Optional(
      Type.Integer({
        description:
          "Failed steps in a row since the last step that went through; the roll fails at the limit.",
        minimum: 0,
        format: "int32",
      }),
    ),
    preUpgradeSnapshotJobName: Note("Snapshot Job taken before the upgrade.", 253),
    waitingOn: Note(
      "What the roll waits for (partition/ordinal), kept so its timeout survives a restart.",
      64,
    ),
    waitingSince: When("When the roll began waiting for waitingOn."),
    stepDownOrdinal: Count("The pod asked to step down last."),
    stepDowns: Count(
      "Step-downs of stepDownOrdinal so far; the roll fails with StepDownTimeout past the limit.",
    ),
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
    // RestoringReadReplicas is upstream 0.5's phase after a restore. This operator never writes it;
    // the enum admits it so a status upstream wrote still validates, and the TypeScript type keeps
    // to the phases the controllers handle.
    phase: Type.Optional(
      StringEnum([...BlueGreenPhases, "RestoringReadReplicas"] as const, {
        description: "Current blue-green phase.",
      }) as unknown as ReturnType<typeof StringEnum<typeof BlueGreenPhases>>,
    ),
    blueControllerRevision: Note("ControllerRevision of blue.", 253),
    validationHook: Type.Optional(ValidationHookStatusSchema),
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
    reason: Type.Optional(
      StringEnum(["RollbackConsensusRepairFailed", "RollbackCleanupPeerRemovalFailed"] as const, {
        description: "Why automation stopped.",
      }),
    ),
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

/** One pod of a runtime restart: the pod as it was when the restart began. */
const RestartPodSchema = Type.Object(
  {
    name: Text("Pod name.", 253),
    uid: Text("UID of the pod that must be replaced.", 64),
  },
  { description: "A pod the restart replaces." },
);

/**
 * Beyond upstream (which rolls a template annotation): the operator's own rolling restart for
 * spec.runtime.restartAt, one pod at a time, the leader last; progress lives here so a restarted
 * operator resumes it.
 */
export const RuntimeRestartStatusSchema = Type.Object(
  {
    restartAt: Note("The spec.runtime.restartAt value this record is about.", 253),
    startedAt: When("When the restart began."),
    cutoff: When("Pods created before this were restarted."),
    pendingPods: Type.Optional(
      Type.Array(RestartPodSchema, {
        description: "Pods still running from before the cutoff; each leaves the list once replaced.",
        maxItems: 512,
      }),
    ),
    restartedPods: Type.Optional(
      Type.Array(Text("Pod name.", 253), {
        description: "Pods replaced so far, in order.",
        maxItems: 512,
      }),
    ),
    lastStepDownTime: When("Last leader step-down of this restart."),
    consecutiveFailures: Count("Failed steps in a row since the last step that went through."),
    lastErrorReason: Note("Reason code of the last failed step.", 253),
    lastErrorMessage: Note("Detail of the last failed step.", 4096),
    completedAt: When("When every pod had been replaced."),
  },
  { description: "Progress of the rolling restart spec.runtime.restartAt asks for." },
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
    description: "Mutex for disruptive work: one upgrade, backup, restore or runtime restart at a time.",
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
    lastBackupTime: When("Last successful backup (upstream's top-level copy of backup.lastBackupTime)."),
    workload: Type.Optional(
      Type.Object(
        { lastError: Type.Optional(LastError) },
        { description: "The workload controller's last error." },
      ),
    ),
    adminOps: Type.Optional(
      Type.Object(
        { lastError: Type.Optional(LastError) },
        { description: "The backup, restore and upgrade controller's last error." },
      ),
    ),
    readReplicas: Type.Optional(
      Type.Object(
        {
          desiredReplicas: Count("Read replicas asked for."),
          readyReplicas: Count("Read replicas that are Ready."),
          healthyReplicas: Count("Read replicas OpenBao reports healthy."),
          registeredReplicas: Count("Read replicas registered as Raft non-voters."),
          storage: Type.Optional(ReadReplicaStorageStatusSchema),
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
    restore: Type.Optional(ClusterRestoreStatusSchema),
    runtimeRestart: Type.Optional(RuntimeRestartStatusSchema),
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
