/**
 * Building blocks shared by the kinds: metadata, conditions, references and a few Kubernetes value
 * shapes. Everything here is a TypeBox schema, so the same value gives a TypeScript type through
 * `Static<>` and a CRD schema through `crd.ts`.
 */
import {
  FormatRegistry,
  type SchemaOptions,
  type Static,
  type TLiteral,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  type TUnion,
  Type,
} from "@sinclair/typebox";

// TypeBox rejects any string whose `format` it does not know, and the API server returns timestamps
// in RFC 3339. Registering here means anyone who imports a kind can check a live object.
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has("date-time")) {
  FormatRegistry.Set("date-time", (value) => rfc3339.test(value) && !Number.isNaN(Date.parse(value)));
}

/** One CEL rule, as `x-kubernetes-validations` carries it. */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** Options with the Kubernetes extensions spelled out, so a typo in one is a compile error. */
export interface KubeOptions extends SchemaOptions {
  "x-kubernetes-validations"?: CelRule[];
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
}

export const cel = (
  rule: string,
  message: string,
  extra: Omit<CelRule, "rule" | "message"> = {},
): CelRule => ({
  rule,
  message,
  ...extra,
});

/** A closed set of strings. A union of literals keeps `Static<>` precise and becomes `enum` in the CRD. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: KubeOptions = {},
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as TUnion<TLiteral<T[number]>[]>;
}

/** Kubernetes' usual bound for a name or key: a DNS subdomain is at most 253 characters. */
export const NAME_MAX = 253;

/** A DNS-1123 subdomain: what most Kubernetes object names must be. */
export const ObjectName = (description: string) =>
  Type.String({
    description,
    minLength: 1,
    maxLength: NAME_MAX,
    pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
  });

/** A key inside a Secret or ConfigMap. */
export const DataKey = (description: string) =>
  Type.String({ description, minLength: 1, maxLength: NAME_MAX, pattern: "^[-._a-zA-Z0-9]+$" });

/** Points at one key of a Secret in the object's own namespace; cross-namespace references are not offered. */
export const SecretKeySelector = (description: string) =>
  Type.Object(
    {
      name: ObjectName("Name of the Secret, in the namespace of this object."),
      key: DataKey("Key inside the Secret."),
    },
    { description },
  );
export type SecretKeySelector = Static<ReturnType<typeof SecretKeySelector>>;

/** A whole Secret (or other object) in the object's own namespace, named only. */
export const LocalObjectReference = (description: string) =>
  Type.Object(
    { name: ObjectName("Name of the referenced object, in the namespace of this object.") },
    { description },
  );
export type LocalObjectReference = Static<ReturnType<typeof LocalObjectReference>>;

/** A free-form object: the API server keeps whatever it holds, and the type says nothing about it. */
export const FreeFormObject = (description: string) =>
  Type.Record(Type.String(), Type.Unknown(), {
    description,
    "x-kubernetes-preserve-unknown-fields": true,
  } satisfies KubeOptions);

/** Maps with string values, as labels and annotations are. */
export const StringMap = (description: string, options: KubeOptions = {}) =>
  Type.Record(Type.String(), Type.String(), { description, ...options });

/** An integer or a string, the way `intstr.IntOrString` is written in CRDs. */
export const IntOrString = (description: string) =>
  Type.Union([Type.Integer(), Type.String()], {
    description,
    "x-kubernetes-int-or-string": true,
  } satisfies KubeOptions);

/** resource.Quantity in its canonical text form; the pattern is the one the API server uses for quantities. */
export const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";
export const Quantity = (description: string, options: KubeOptions = {}) =>
  Type.String({ description, maxLength: 64, pattern: QUANTITY_PATTERN, ...options });

/**
 * A duration such as `720h`, `1h30m` or `7d`: Go's units plus days, which OpenBao's own parser
 * accepts and people write for retention and lease times.
 */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h|d))+$";
export const Duration = (description: string, options: KubeOptions = {}) =>
  Type.String({ description, maxLength: 64, pattern: DURATION_PATTERN, ...options });

export const Timestamp = (description: string) => Type.String({ description, format: "date-time" });

/** The schema shape of `resources` on a container. */
export const ResourceRequirements = (description: string) =>
  Type.Object(
    {
      limits: Type.Optional(
        Type.Record(Type.String(), IntOrString("A quantity."), {
          description: "Upper bounds per resource name.",
        }),
      ),
      requests: Type.Optional(
        Type.Record(Type.String(), IntOrString("A quantity."), {
          description: "Guaranteed amounts per resource name.",
        }),
      ),
    },
    { description },
  );

export const OwnerReferenceSchema = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  name: Type.String(),
  uid: Type.String(),
  controller: Type.Optional(Type.Boolean()),
  blockOwnerDeletion: Type.Optional(Type.Boolean()),
});

/**
 * ObjectMeta as far as a controller reads it. The CRD never carries this shape: the API server owns
 * metadata validation, so the generator writes `metadata: {type: object}` in its place.
 */
export const ObjectMetaSchema = Type.Object({
  name: Type.Optional(Type.String()),
  generateName: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Type.Integer()),
  creationTimestamp: Type.Optional(Type.String()),
  deletionTimestamp: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
  finalizers: Type.Optional(Type.Array(Type.String())),
  ownerReferences: Type.Optional(Type.Array(OwnerReferenceSchema)),
  managedFields: Type.Optional(Type.Array(Type.Unknown())),
});
export type ObjectMeta = Static<typeof ObjectMetaSchema>;

/** metav1.Condition, with the limits the upstream type declares. */
export const ConditionSchema = Type.Object(
  {
    type: Type.String({
      description: "Type of condition in CamelCase.",
      maxLength: 316,
      pattern:
        "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    }),
    status: StringEnum(["True", "False", "Unknown"] as const, { description: "Status of the condition." }),
    observedGeneration: Type.Optional(
      Type.Integer({
        description: "metadata.generation the condition was set from.",
        format: "int64",
        minimum: 0,
      }),
    ),
    lastTransitionTime: Timestamp("When the status last changed."),
    reason: Type.String({
      description: "Machine-readable CamelCase reason for the last transition.",
      minLength: 1,
      maxLength: 1024,
      pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    }),
    message: Type.String({
      description: "Human-readable detail; never carries secret values.",
      maxLength: 32768,
    }),
  },
  { description: "One observation of the object's state." },
);
export type Condition = Static<typeof ConditionSchema>;
export type ConditionStatus = Condition["status"];

/** The conditions list: one entry per type, merged by type under server-side apply. */
export const Conditions = (description = "Current observations of the object's state, one per type.") =>
  Type.Array(ConditionSchema, {
    description,
    maxItems: 32,
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  } satisfies KubeOptions);

export const ObservedGeneration = () =>
  Type.Integer({
    description: "metadata.generation this status was computed from.",
    format: "int64",
    minimum: 0,
  });

/**
 * The whole object: apiVersion and kind fixed to this kind, metadata, spec and an optional status.
 * Keeping this in one helper keeps every kind's root the same shape.
 */
export function KindSchema<
  Spec extends TSchema,
  Status extends TSchema,
  const ApiVersion extends string,
  const K extends string,
>(
  apiVersion: ApiVersion,
  kind: K,
  spec: Spec,
  status: Status,
  description: string,
): TObject<{
  apiVersion: TLiteral<ApiVersion>;
  kind: TLiteral<K>;
  metadata: typeof ObjectMetaSchema;
  spec: Spec;
  status: TOptional<Status>;
}> {
  const properties = {
    apiVersion: Type.Literal(apiVersion),
    kind: Type.Literal(kind),
    metadata: ObjectMetaSchema,
    spec,
    status: Type.Optional(status),
  };
  return Type.Object(properties, { description }) as unknown as TObject<{
    apiVersion: TLiteral<ApiVersion>;
    kind: TLiteral<K>;
    metadata: typeof ObjectMetaSchema;
    spec: Spec;
    status: TOptional<Status>;
  }>;
}

/** Shorthand for an object schema with Kubernetes options. */
export const Obj = <T extends TProperties>(properties: T, options: KubeOptions = {}) =>
  Type.Object(properties, options);
