/** VaultSeed (`ohmlab.fr/v1alpha1`): one object declares what one KV v2 path must hold. */
import { type Static, Type } from "@sinclair/typebox";
import { Conditions, cel, KindSchema, type KubeOptions, ObservedGeneration, StringEnum } from "./common.js";
import type { KindDefinition } from "./crd.js";

import {
  DeletionPolicies,
  VaultSeedApiVersion,
  VaultSeedGroup,
  VaultSeedKind,
  VaultSeedPlural,
  VaultSeedVersion,
} from "./vaultseed-names.js";

export * from "./vaultseed-names.js";

/**
 * The declared tree. The API server cannot describe a tree of arbitrary depth, so the CRD keeps
 * whatever arrives; the TypeScript type and the controller's own validation say that leaves are
 * strings (templates or literals), numbers or booleans (stored as given), and that key names
 * carry no dot.
 */
export const SeedTreeSchema = Type.Recursive(
  (Self) => Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Self])),
  {
    description:
      "The tree the path must hold. Nested maps become dotted key paths; a leaf is a plain value or a template such as <random:32>, <bcrypt:admin.password> or <ref:mount/path#key>. Key names must not contain a dot.",
    "x-kubernetes-preserve-unknown-fields": true,
  } satisfies KubeOptions,
);
export type SeedTree = Static<typeof SeedTreeSchema>;

// Rotation keys are dotted paths into the tree. The bounds keep the CEL cost estimate small
// should a rule ever look at them, and no real path needs more.
export const VaultSeedRotateSchema = Type.Object(
  {
    token: Type.Optional(
      Type.String({
        description:
          "Generated keys are regenerated once for every distinct token; keeping the token does nothing.",
        minLength: 1,
        maxLength: 253,
      }),
    ),
    every: Type.Optional(
      Type.String({
        description:
          'Generated keys are regenerated once per period (hours, minutes or seconds, at least 1h, e.g. "2160h"); the start of the current period is recorded on the path.',
        pattern: "^[0-9]{1,7}(h|m|s)$",
        maxLength: 8,
      }),
    ),
    keys: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
        description: "Dotted key paths to regenerate. Empty or absent means every generated key.",
        maxItems: 256,
      }),
    ),
  },
  {
    description: "Regeneration of generated keys: once per token, and once per period.",
    "x-kubernetes-validations": [
      cel("has(self.token) || has(self.every)", "rotate needs a token, a period (every), or both"),
    ],
  } satisfies KubeOptions,
);

export const VaultSeedSpecSchema = Type.Object(
  {
    path: Type.String({
      description:
        "<mount>/<path> of the secret. Immutable: delete the object and create another to move it.",
      minLength: 3,
      maxLength: 512,
      pattern: "^[^/\\s]+(/[^/\\s]+)+$",
      "x-kubernetes-validations": [
        cel(
          "self == oldSelf",
          "path is immutable: delete this VaultSeed and create another for the new path",
        ),
      ],
    } satisfies KubeOptions),
    data: SeedTreeSchema,
    rotate: Type.Optional(VaultSeedRotateSchema),
    prune: Type.Optional(
      Type.Boolean({
        description: "Remove keys this controller wrote that data no longer declares.",
        default: false,
      }),
    ),
    deletionPolicy: Type.Optional(
      StringEnum(DeletionPolicies, {
        description: "Retain leaves the path in place when the object is deleted; Delete removes it.",
        default: "Retain",
      }),
    ),
  },
  { description: "What the KV v2 path must hold." },
);
export type VaultSeedSpec = Static<typeof VaultSeedSpecSchema>;

export const VaultSeedStatusSchema = Type.Object(
  {
    conditions: Type.Optional(Conditions()),
    observedGeneration: Type.Optional(ObservedGeneration()),
    managedKeys: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        description: "Dotted key paths this controller wrote; only these are ever pruned.",
        maxItems: 4096,
      }),
    ),
    kvVersion: Type.Optional(
      Type.Integer({
        description: "KV version of the path last read or written.",
        format: "int64",
        minimum: 0,
      }),
    ),
    rotationToken: Type.Optional(
      Type.String({ description: "Rotation token last recorded on the path. Not a secret.", maxLength: 253 }),
    ),
  },
  { description: "What the controller last observed. Holds key names and versions, never values." },
);
export type VaultSeedStatus = Static<typeof VaultSeedStatusSchema>;

export const VaultSeedSchema = KindSchema(
  VaultSeedApiVersion,
  VaultSeedKind,
  VaultSeedSpecSchema,
  VaultSeedStatusSchema,
  "VaultSeed declares the content of one KV v2 path: keys seeded once, references kept in sync, rotation on demand or by period.",
);
export type VaultSeed = Static<typeof VaultSeedSchema>;

export const VaultSeedDefinition: KindDefinition = {
  group: VaultSeedGroup,
  version: VaultSeedVersion,
  kind: VaultSeedKind,
  plural: VaultSeedPlural,
  scope: "Namespaced",
  categories: ["ohmlab"],
  schema: VaultSeedSchema,
  printerColumns: [
    { name: "Path", type: "string", jsonPath: ".spec.path" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
