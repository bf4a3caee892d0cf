/**
 * OpenBaoCluster fields upstream added between its 0.1.0 and 0.5.0 releases (volumes for file audit
 * devices and the ACME cache, recovery keys, the runtime restart request, metrics listener and
 * ServiceMonitor options, workload identity, status receipts). Same names, types, enums, defaults
 * and required fields as upstream 0.5.0, and each of its validation rules with the same outcome, so
 * a 0.5 manifest applies unchanged. What the operator does with each is in
 * `targets/openbao/unsupported.ts`.
 */
import { Type } from "@sinclair/typebox";
import { cel, type KubeOptions, Quantity, StringEnum, Timestamp } from "./common.js";

// Strings and lists are bounded: the spec carries CEL rules, priced by the largest value they could meet.
const Str = (description: string, extra: KubeOptions = {}) =>
  Type.String({ description, maxLength: 4096, ...extra });
const StrMap = (description: string) =>
  Type.Record(Type.String(), Type.String({ maxLength: 65536 }), { description });
const NonEmpty = (description: string) => Str(description, { minLength: 1, maxLength: 253 });

export const VolumeModes = ["ManagedPVC", "ExistingPVC"] as const;

// Rules shared by every "managed or existing claim" volume: a managed claim needs a size and names
// no claim; an existing claim needs its name and takes neither size nor class.
const volumeRules = (field: string) => [
  cel(
    "self.mode != 'ExistingPVC' || !has(self.size) || size(self.size) == 0",
    `${field}.size applies to mode ManagedPVC only`,
  ),
  cel(
    "self.mode != 'ExistingPVC' || !has(self.storageClassName) || size(self.storageClassName) == 0",
    `${field}.storageClassName applies to mode ManagedPVC only`,
  ),
  cel(
    "self.mode != 'ExistingPVC' || (has(self.existingClaimName) && size(self.existingClaimName) > 0)",
    `${field}.existingClaimName must name the claim when mode is ExistingPVC`,
  ),
  cel(
    "self.mode != 'ManagedPVC' || !has(self.existingClaimName) || size(self.existingClaimName) == 0",
    `${field}.existingClaimName applies to mode ExistingPVC only`,
  ),
  cel(
    "self.mode != 'ManagedPVC' || (has(self.size) && size(self.size) > 0)",
    `${field}.size must be set when mode is ManagedPVC`,
  ),
];

const volumeFields = {
  mode: StringEnum(VolumeModes, {
    description: "ManagedPVC: the operator creates the claim. ExistingPVC: a claim made elsewhere.",
  }),
  existingClaimName: Type.Optional(NonEmpty("Claim to mount, for mode ExistingPVC.")),
  size: Type.Optional(Quantity("Size of the managed claim, for mode ManagedPVC.", { minLength: 1 })),
  storageClassName: Type.Optional(Str("StorageClass of the managed claim.", { maxLength: 253 })),
};

/** The ACME client's shared cache: one claim all serving pods read, so they do not each order. */
export const SharedCacheSchema = Type.Object(volumeFields, {
  description:
    "A volume shared by every serving pod for OpenBao's ACME cache; needed when more than one pod serves (replicas > 1 or BlueGreen).",
  "x-kubernetes-validations": volumeRules("tls.acme.sharedCache"),
} satisfies KubeOptions);

/** A volume where file audit devices write. */
export const AuditFileStorageSchema = Type.Object(
  {
    ...volumeFields,
    mountPath: Type.Optional(
      Str("Where the volume is mounted in the OpenBao container.", {
        default: "/openbao/audit",
        maxLength: 4096,
      }),
    ),
  },
  {
    description: "A persistent volume for file audit devices (managed or an existing claim).",
    "x-kubernetes-validations": [
      cel(
        "!has(self.mountPath) || (self.mountPath.startsWith('/') && self.mountPath != '/')",
        "auditFileStorage.mountPath must be an absolute path other than /",
      ),
      ...volumeRules("auditFileStorage"),
    ],
  } satisfies KubeOptions,
);

export const RecoveryKeysSchema = Type.Object(
  {
    initial: Type.Optional(
      Type.Object(
        {
          shares: Type.Integer({
            description: "Recovery key shares OpenBao creates.",
            format: "int32",
            minimum: 1,
            maximum: 255,
          }),
          threshold: Type.Integer({
            description: "Shares needed to recover.",
            format: "int32",
            minimum: 1,
            maximum: 255,
          }),
          recipients: Type.Array(
            Type.Object(
              {
                name: Str("Who receives the share; unique in the list.", {
                  minLength: 1,
                  maxLength: 64,
                  pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                }),
                pgpPublicKey: Str("Base64 PGP public key the share is encrypted to.", {
                  minLength: 1,
                  maxLength: 65536,
                }),
                fingerprint: Type.Optional(
                  Str("Expected fingerprint of the key (40 or 64 hex digits).", {
                    maxLength: 64,
                    pattern: "^([0-9A-Fa-f]{40}|[0-9A-Fa-f]{64})$",
                  }),
                ),
              },
              { description: "One recipient of a recovery key share." },
            ),
            {
              description: "One recipient per share, in share order.",
              minItems: 1,
              maxItems: 255,
              "x-kubernetes-list-type": "map",
              "x-kubernetes-list-map-keys": ["name"],
            } satisfies KubeOptions,
          ),
        },
        {
          description: "Recovery keys made at first initialization, each encrypted to one recipient.",
          "x-kubernetes-validations": [
            cel("self.threshold <= self.shares", "recoveryKeys.initial.threshold may not exceed shares"),
            cel(
              "size(self.recipients) == self.shares",
              "recoveryKeys.initial needs exactly one recipient per share",
            ),
          ],
        } satisfies KubeOptions,
      ),
    ),
  },
  { description: "Recovery keys of an auto-unsealed, self-initialized cluster." },
);

export const RuntimeSchema = Type.Object(
  {
    restartAt: Type.Optional(
      Str("Change to a new value (e.g. a timestamp) for one rolling restart of the pods.", {
        minLength: 1,
        maxLength: 253,
      }),
    ),
  },
  { description: "Requests about the running pods." },
);

const SUBJECT_PATTERN =
  "^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?$";
const Subjects = (description: string) =>
  Type.Optional(
    Type.Array(Str("A ServiceAccount subject.", { maxLength: 340, pattern: SUBJECT_PATTERN }), {
      description,
      maxItems: 32,
      "x-kubernetes-list-type": "set",
    } satisfies KubeOptions),
  );

export const AdditionalSubjectsSchema = Type.Object(
  {
    operator: Subjects("Extra subjects the operator's JWT role accepts."),
    backup: Subjects("Extra subjects the backup JWT role accepts."),
    restore: Subjects("Extra subjects the restore JWT role accepts (cross-cluster restore)."),
    upgrade: Subjects("Extra subjects the upgrade JWT role accepts."),
  },
  { description: "ServiceAccount subjects the bootstrapped JWT roles accept besides the cluster's own." },
);

export const WorkloadIdentitySchema = Type.Object(
  {
    serviceAccountAnnotations: Type.Optional(
      StrMap("Annotations on the Job's ServiceAccount (e.g. a cloud role binding)."),
    ),
    podLabels: Type.Optional(StrMap("Labels on the Job's pods (e.g. a workload identity selector).")),
  },
  { description: "Cloud workload identity for the backup and restore Jobs." },
);

const SecretKey = (description: string) =>
  Type.Object(
    {
      name: NonEmpty("Name of the Secret or ConfigMap."),
      key: Type.Optional(Str("Key inside it.")),
    },
    { description },
  );

export const MetricsOnlyListenerSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: "Serve metrics on a listener of their own." })),
    port: Type.Optional(
      Type.Integer({
        description: "Port of the metrics listener.",
        format: "int32",
        minimum: 1,
        maximum: 65535,
        default: 8202,
      }),
    ),
    unauthenticatedMetricsAccess: Type.Optional(
      Type.Boolean({ description: "Serve metrics on that listener without a token." }),
    ),
  },
  { description: "A listener that serves only metrics." },
);

/** ServiceMonitor options beyond enabled/interval/scrapeTimeout. */
export const serviceMonitorFields05 = {
  labels: Type.Optional(StrMap("Labels of the ServiceMonitor (e.g. the Prometheus selector).")),
  annotations: Type.Optional(StrMap("Annotations of the ServiceMonitor.")),
  jobLabel: Type.Optional(Str("Service label whose value becomes the job label.")),
  authorization: Type.Optional(
    Type.Object(
      {
        type: Type.Optional(Str("Authorization type; Bearer when unset.")),
        credentialsSecret: SecretKey("Secret key with the credentials."),
      },
      { description: "Credentials Prometheus sends when it scrapes." },
    ),
  ),
  tlsConfig: Type.Optional(
    Type.Object(
      {
        caSecret: Type.Optional(SecretKey("Secret key with the CA bundle.")),
        caConfigMap: Type.Optional(SecretKey("ConfigMap key with the CA bundle.")),
        serverName: Type.Optional(Str("Name verified in the server certificate.")),
        insecureSkipVerify: Type.Optional(
          Type.Boolean({ description: "Skip verification. Development only." }),
        ),
      },
      { description: "TLS of the scrape." },
    ),
  ),
};

const ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$";
const EnvFromKey = (description: string) =>
  Type.Object(
    {
      name: Str("Variable name.", { pattern: ENV_NAME, maxLength: 253 }),
      secretKey: Str("Key of unseal.credentialsSecretRef it comes from.", {
        minLength: 1,
        maxLength: 253,
        pattern: "^[-._A-Za-z0-9]+$",
      }),
    },
    { description },
  );

export const PKCS11RuntimeSchema = Type.Object(
  {
    libraryPath: Type.Optional(Str("Where the PKCS#11 library is inside the pod.")),
    env: Type.Optional(
      Type.Array(EnvFromKey("A variable set from a Secret key."), {
        description: "Variables the library reads, from unseal.credentialsSecretRef.",
        maxItems: 16,
      }),
    ),
    fileEnv: Type.Optional(
      Type.Array(EnvFromKey("A variable pointing at a file made from a Secret key."), {
        description: "Variables that name a file holding a key of unseal.credentialsSecretRef.",
        maxItems: 16,
      }),
    ),
  },
  { description: "What the PKCS#11 library needs in the pod." },
);

export const KMSSealSchema = Type.Object(
  {
    pluginName: Type.Optional(
      Str("Name of the kms plugin (declared in spec.plugins) that provides the seal.", {
        minLength: 1,
        maxLength: 253,
      }),
    ),
    config: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 65536 }), {
        description: "The plugin's seal settings.",
        maxProperties: 64,
      }),
    ),
  },
  {
    description:
      "A seal provided by a KMS plugin (OpenBao 2.6+). The earlier form, a name and the settings side by side, is still kept.",
    "x-kubernetes-preserve-unknown-fields": true,
  } satisfies KubeOptions,
);

// ---------------------------------------------------------------- status

const When = (description: string) => Type.Optional(Timestamp(description));
const Receipt = <const S extends readonly string[]>(stages: S, description: string) =>
  Type.Object(
    {
      operationID: Str("Identifies the operation."),
      stage: StringEnum(stages, { description: "How far the operation got." }),
      jobName: Str("The Job committed to."),
      jobUID: Type.Optional(Str("UID of that Job once seen.")),
      preparedAt: When("When the Job was prepared."),
      committedAt: When("When the operator committed to the Job."),
      createdAt: When("When the Job was created."),
      terminalObservedAt: When("When the Job's end was seen."),
      terminalResult: Type.Optional(
        StringEnum(["Succeeded", "Failed"] as const, { description: "How it ended." }),
      ),
    },
    { description },
  );

export const ValidationHookStatusSchema = Type.Object(
  {
    ...Receipt(["Prepared", "Committed", "Created", "TerminalObserved", "Unknown"] as const, "").properties,
    greenRevision: Str("Green revision the hook validates."),
    specHash: Str("Hash of the hook's spec."),
  },
  { description: "The pre-promotion hook Job of this upgrade attempt." },
);

export const RestoreExecutionSchema = Type.Object(
  {
    ...Receipt(
      ["Prepared", "Committed", "Created", "TerminalObserved", "FollowThroughComplete", "Unknown"] as const,
      "",
    ).properties,
    followThroughCompletedAt: When("When the restart after the restore finished."),
  },
  {
    description:
      "Receipt of the restore Job: once committed, a second Job is never created; a committed Job that vanished is reported.",
  },
);

export const ClusterRestoreStatusSchema = Type.Object(
  {
    name: Type.Optional(Str("OpenBaoRestore last applied.")),
    uid: Type.Optional(Str("Its UID.")),
    restartCompletedAt: When("When every pod had restarted after it."),
  },
  { description: "The last restore applied to this cluster." },
);

export const ReadReplicaStorageStatusSchema = Type.Object(
  {
    desiredPVCs: Type.Optional(Type.Integer({ description: "Claims wanted.", format: "int32" })),
    boundPVCs: Type.Optional(Type.Integer({ description: "Claims bound.", format: "int32" })),
    storageClassName: Type.Optional(Str("StorageClass of the claims.")),
  },
  { description: "Volumes of the read replicas." },
);
