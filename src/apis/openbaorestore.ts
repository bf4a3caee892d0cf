/**
 * OpenBaoRestore (`openbao.org/v1alpha1`): an explicit, one-shot request to restore a snapshot into
 * an OpenBaoCluster. The request is immutable, so what was validated is what runs.
 */
import { type Static, Type } from "@sinclair/typebox";
import {
  Conditions,
  cel,
  KindSchema,
  type KubeOptions,
  ObservedGeneration,
  StringEnum,
  Timestamp,
} from "./common.js";
import type { KindDefinition } from "./crd.js";
import {
  BackupTargetSchema,
  NameReference,
  OpenBaoApiVersion,
  OpenBaoGroup,
  OpenBaoVersion,
} from "./openbaocluster.js";

export const OpenBaoRestoreKind = "OpenBaoRestore";
export const OpenBaoRestorePlural = "openbaorestores";

export const RestorePhases = ["Pending", "Validating", "Running", "Completed", "Failed"] as const;
export type OpenBaoRestorePhase = (typeof RestorePhases)[number];

export const OpenBaoRestoreCondition = {
  Validated: "Validated",
  LockAcquired: "LockAcquired",
  OperationLockOverridden: "OperationLockOverridden",
  Complete: "Complete",
  // Upstream's condition types.
  RestoreComplete: "RestoreComplete",
  OperationLockOverride: "OperationLockOverride",
  Provisioned: "Provisioned",
} as const;
export type OpenBaoRestoreConditionType =
  (typeof OpenBaoRestoreCondition)[keyof typeof OpenBaoRestoreCondition];

export const OpenBaoRestoreReason = {
  ClusterNotFound: "ClusterNotFound",
  ClusterNotInitialized: "ClusterNotInitialized",
  ClusterUnhealthy: "ClusterUnhealthy",
  SnapshotNotFound: "SnapshotNotFound",
  CredentialsMissing: "CredentialsMissing",
  OperationLockHeld: "OperationLockHeld",
  OperationLockOverridden: "OperationLockOverridden",
  ValidationSucceeded: "ValidationSucceeded",
  JobCreated: "JobCreated",
  JobSucceeded: "JobSucceeded",
  JobFailed: "JobFailed",
  // Upstream's reasons for a restore's outcome.
  RestoreSucceeded: "RestoreSucceeded",
  RestoreFailed: "RestoreFailed",
  RestoreExecutorImageVerificationFailed: "RestoreExecutorImageVerificationFailed",
  Acquired: "Acquired",
  InProgress: "InProgress",
  InvalidRequest: "InvalidRequest",
  JobConflict: "JobConflict",
  JobMissing: "JobMissing",
  Validating: "Validating",
  /** The snapshot's hash file was sealed by another seal than the target's running one. */
  SealMismatch: "SealMismatch",
  /** After the snapshot was applied, the cluster's pods were restarted to load the restored data. */
  PodsRestarted: "PodsRestarted",
} as const;
export type OpenBaoRestoreReasonType = (typeof OpenBaoRestoreReason)[keyof typeof OpenBaoRestoreReason];

export const RestoreSourceSchema = Type.Object(
  {
    key: Type.String({
      description: "Full object key of the snapshot in the bucket.",
      minLength: 1,
      maxLength: 1024,
    }),
    target: BackupTargetSchema,
  },
  { description: "Where the snapshot is read from." },
);

export const OpenBaoRestoreSpecSchema = Type.Object(
  {
    cluster: Type.String({
      description: "OpenBaoCluster to restore into, in the namespace of this object.",
      minLength: 1,
      maxLength: 253,
    }),
    source: RestoreSourceSchema,
    jwtAuthRole: Type.Optional(
      Type.String({ description: "OpenBao JWT role the restore Job logs in with.", maxLength: 253 }),
    ),
    tokenSecretRef: Type.Optional(
      NameReference("Secret with an OpenBao token, used when no JWT role is set."),
    ),
    image: Type.Optional(
      Type.String({
        description: "Executor image; the backup image when unset.",
        minLength: 1,
        maxLength: 512,
      }),
    ),
    force: Type.Optional(
      Type.Boolean({
        description: "Restore even when safety checks object, e.g. to an unhealthy cluster.",
        default: false,
      }),
    ),
    overrideOperationLock: Type.Optional(
      Type.Boolean({
        description: "Take the cluster's operation lock from a running upgrade or backup. Needs force.",
        default: false,
      }),
    ),
  },
  {
    description: "The restore to perform. Immutable once created.",
    "x-kubernetes-validations": [
      cel("self == oldSelf", "an OpenBaoRestore is immutable: create a new one instead"),
      cel(
        "!has(self.overrideOperationLock) || !self.overrideOperationLock || (has(self.force) && self.force)",
        "overrideOperationLock needs force: true",
      ),
    ],
  } satisfies KubeOptions,
);
export type OpenBaoRestoreSpec = Static<typeof OpenBaoRestoreSpecSchema>;

export const OpenBaoRestoreStatusSchema = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(RestorePhases, { description: "Where the request is.", default: "Pending" }),
    ),
    jobName: Type.Optional(
      Type.String({ description: "Restore Job created for this request.", maxLength: 253 }),
    ),
    startTime: Type.Optional(Timestamp("When the restore started.")),
    completionTime: Type.Optional(Timestamp("When the restore reached a terminal phase.")),
    snapshotKey: Type.Optional(
      Type.String({ description: "Key of the snapshot restored.", maxLength: 1024 }),
    ),
    snapshotSize: Type.Optional(
      Type.Integer({ description: "Bytes in the restored snapshot.", minimum: 0, format: "int64" }),
    ),
    message: Type.Optional(Type.String({ description: "Detail about the current phase.", maxLength: 4096 })),
    observedGeneration: Type.Optional(ObservedGeneration()),
    conditions: Type.Optional(Conditions()),
  },
  {
    description:
      "Progress of the request. Completed means the restore workflow finished, not that the cluster is unsealed and serving.",
  },
);
export type OpenBaoRestoreStatus = Static<typeof OpenBaoRestoreStatusSchema>;

export const OpenBaoRestoreSchema = KindSchema(
  OpenBaoApiVersion,
  OpenBaoRestoreKind,
  OpenBaoRestoreSpecSchema,
  OpenBaoRestoreStatusSchema,
  "OpenBaoRestore asks for one restore of a snapshot into an OpenBaoCluster. It is destructive and immutable.",
);
export type OpenBaoRestore = Static<typeof OpenBaoRestoreSchema>;

export const OpenBaoRestoreDefinition: KindDefinition = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoRestoreKind,
  plural: OpenBaoRestorePlural,
  scope: "Namespaced",
  shortNames: ["obrestore"],
  categories: ["openbao"],
  schema: OpenBaoRestoreSchema,
  printerColumns: [
    { name: "Cluster", type: "string", jsonPath: ".spec.cluster" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    { name: "Message", type: "string", jsonPath: ".status.message", priority: 1 },
  ],
};

/** The controller and the field manager that write OpenBaoRestore objects. */
export const OpenBaoRestoreManagers = {
  controller: "openbaorestore",
  fieldManager: "platform-operator-openbao-restore",
} as const;
