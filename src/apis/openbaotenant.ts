/**
 * OpenBaoTenant (`openbao.org/v1alpha1`): onboards one namespace for OpenBaoClusters, as upstream's
 * openbao-operator does. Its provisioner grants the operator what it needs there and caps what the
 * namespace may use (a ResourceQuota and a LimitRange, the core kinds' own specs).
 */
import { type Static, Type } from "@sinclair/typebox";
import { Conditions, KindSchema, type KubeOptions, QUANTITY_PATTERN } from "./common.js";
import type { KindDefinition } from "./crd.js";
import { OpenBaoApiVersion, OpenBaoGroup, OpenBaoVersion } from "./openbaocluster.js";

export * from "./openbaotenant-names.js";

import { OpenBaoTenantKind, OpenBaoTenantPlural } from "./openbaotenant-names.js";

/** resource.Quantity as core kinds declare it: a number, or a string in the quantity syntax. */
const QuantityValue = () =>
  Type.Union([Type.Integer(), Type.String()], {
    pattern: QUANTITY_PATTERN,
    "x-kubernetes-int-or-string": true,
  } satisfies KubeOptions);

const ResourceList = (description: string) => Type.Record(Type.String(), QuantityValue(), { description });

const atomicStrings = (description: string) =>
  Type.Array(Type.String(), { description, "x-kubernetes-list-type": "atomic" } satisfies KubeOptions);

/** core/v1 ResourceQuotaSpec. */
export const ResourceQuotaSpecSchema = Type.Object(
  {
    hard: Type.Optional(ResourceList("Hard limit per named resource.")),
    scopes: Type.Optional(atomicStrings("Scopes every object the quota tracks must match.")),
    scopeSelector: Type.Optional(
      Type.Object(
        {
          matchExpressions: Type.Optional(
            Type.Array(
              Type.Object({
                operator: Type.String({ description: "In, NotIn, Exists or DoesNotExist." }),
                scopeName: Type.String({ description: "The scope the selector applies to." }),
                values: Type.Optional(atomicStrings("Values for In and NotIn.")),
              }),
              {
                description: "Scope selector requirements.",
                "x-kubernetes-list-type": "atomic",
              } satisfies KubeOptions,
            ),
          ),
        },
        {
          description: "Scopes as expressions; an object must match these and scopes.",
          "x-kubernetes-map-type": "atomic",
        } satisfies KubeOptions,
      ),
    ),
  },
  {
    description:
      "ResourceQuota spec for the target namespace; upstream's defaults (50 pods, 20/40 CPU, 64Gi/128Gi memory) when unset.",
  },
);

/** core/v1 LimitRangeSpec. */
export const LimitRangeSpecSchema = Type.Object(
  {
    limits: Type.Array(
      Type.Object({
        type: Type.String({ description: "Kind of resource the limit applies to, e.g. Container." }),
        default: Type.Optional(ResourceList("Default limits when a container names none.")),
        defaultRequest: Type.Optional(ResourceList("Default requests when a container names none.")),
        max: Type.Optional(ResourceList("Maximum usage per resource name.")),
        min: Type.Optional(ResourceList("Minimum usage per resource name.")),
        maxLimitRequestRatio: Type.Optional(
          ResourceList("Highest limit-to-request ratio per resource name."),
        ),
      }),
      { description: "Limits enforced, one entry per kind of resource.", "x-kubernetes-list-type": "atomic" },
    ),
  },
  {
    description:
      "LimitRange spec for the target namespace; upstream's container defaults (500m/512Mi limits, 100m/128Mi requests) when unset.",
  },
);

export const OpenBaoTenantSpecSchema = Type.Object(
  {
    targetNamespace: Type.String({
      description:
        "Namespace to onboard. A tenant outside the operator's namespace may name only its own namespace.",
      minLength: 1,
    }),
    quota: Type.Optional(ResourceQuotaSpecSchema),
    limitRange: Type.Optional(LimitRangeSpecSchema),
  },
  { description: "The namespace to onboard and its limits." },
);
export type OpenBaoTenantSpec = Static<typeof OpenBaoTenantSpecSchema>;

export const OpenBaoTenantStatusSchema = Type.Object(
  {
    provisioned: Type.Optional(
      Type.Boolean({ description: "Whether the target namespace holds everything the tenant asks for." }),
    ),
    lastError: Type.Optional(
      Type.String({ description: "Why the last provisioning failed; empty after a success." }),
    ),
    conditions: Type.Optional(Conditions()),
  },
  { description: "Provisioning state of the target namespace." },
);
export type OpenBaoTenantStatus = Static<typeof OpenBaoTenantStatusSchema>;

export const OpenBaoTenantSchema = KindSchema(
  OpenBaoApiVersion,
  OpenBaoTenantKind,
  OpenBaoTenantSpecSchema,
  OpenBaoTenantStatusSchema,
  "OpenBaoTenant onboards a namespace for OpenBaoClusters: the operator's access there, a quota and limits.",
);
export type OpenBaoTenant = Static<typeof OpenBaoTenantSchema>;

export const OpenBaoTenantDefinition: KindDefinition = {
  group: OpenBaoGroup,
  version: OpenBaoVersion,
  kind: OpenBaoTenantKind,
  plural: OpenBaoTenantPlural,
  scope: "Namespaced",
  shortNames: ["obt"],
  categories: ["openbao"],
  schema: OpenBaoTenantSchema,
  printerColumns: [
    { name: "Target Namespace", type: "string", jsonPath: ".spec.targetNamespace" },
    { name: "Provisioned", type: "boolean", jsonPath: ".status.provisioned" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
