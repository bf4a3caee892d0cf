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
import { RestoreExecutionSchema } from "./openbaocluster-v05.js";

export * from "./openbaorestore-names.js";

import { OpenBaoRestoreKind, OpenBaoRestorePlural, RestorePhases } from "./openbaorestore-names.js";

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
    // Unknown is upstream 0.5's phase for a committed Job that vanished (restore/receipt.ts writes
    // it); the TypeScript type keeps to the other phases, and the receipt module names this one.
    phase: Type.Optional(
      StringEnum([...RestorePhases, "Unknown"] as const, {
        description: "Where the request is.",
        default: "Pending",
      }) as unknown as ReturnType<typeof StringEnum<typeof RestorePhases>>,
    ),
    execution: Type.Optional(RestoreExecutionSchema),
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
