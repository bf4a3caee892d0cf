/**
 * Pod-level shapes of OpenBaoCluster that mirror Kubernetes core types: resources with claims,
 * scheduling (affinity, tolerations, topology spread, node selector) and pod metadata. They are
 * built once here, from small builders, so the read-replica template (upstream 0.5's
 * `readReplicas.template`) and any later pod-shaped field share one definition instead of spelling
 * out each of the API's nested paths by hand.
 *
 * Only names, types and required-ness follow Kubernetes; the API server's own pod validation still
 * decides the values once the operator writes them into a StatefulSet.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { IntOrString, type KubeOptions, QUANTITY_PATTERN } from "./common.js";

// Every string and list is bounded: the spec carries CEL rules, and the API server prices a rule by
// the largest value it could meet. The bounds are Kubernetes' own where it has one (names and keys
// 253 or 316, annotation values by the object size), generous elsewhere.
const Str = (description: string, maxLength = 316) => Type.String({ description, maxLength });
const Int32 = (description: string) => Type.Integer({ description, format: "int32" });
const StrMap = (description: string) =>
  Type.Record(Type.String(), Type.String({ maxLength: 65536 }), { description });
const Atomic = <T extends TSchema>(items: T, description: string) =>
  Type.Array(items, { description, maxItems: 64, "x-kubernetes-list-type": "atomic" } satisfies KubeOptions);
const Strings = (description: string) => Atomic(Type.String({ maxLength: 316 }), description);

/** A quantity that may be written as a number or a string (resource.Quantity in CRDs). */
export const IntOrStringQuantity = (description: string) => {
  const schema = IntOrString(description);
  // The pattern applies to the string form only; the API server checks it the same way.
  (schema as unknown as Record<string, unknown>)["pattern"] = QUANTITY_PATTERN;
  return schema;
};

/** labels and annotations for pods, as `podMetadata` and a template's `metadata` carry them. */
export const PodMetadata = (description: string) =>
  Type.Object(
    {
      labels: Type.Optional(StrMap("Labels added to the pods.")),
      annotations: Type.Optional(StrMap("Annotations added to the pods.")),
    },
    { description },
  );

/** corev1.ResourceRequirements, claims included. */
export const ResourceRequirementsWithClaims = (description: string) =>
  Type.Object(
    {
      limits: Type.Optional(
        Type.Record(Type.String(), IntOrStringQuantity("A quantity."), {
          description: "Upper bounds per resource name.",
        }),
      ),
      requests: Type.Optional(
        Type.Record(Type.String(), IntOrStringQuantity("A quantity."), {
          description: "Guaranteed amounts per resource name.",
        }),
      ),
      claims: Type.Optional(
        Type.Array(
          Type.Object(
            {
              name: Str("Name of a resource claim of the pod."),
              request: Type.Optional(Str("One request of that claim.")),
            },
            { description: "A dynamic resource claim the container uses." },
          ),
          {
            description: "Dynamic resource claims the container uses.",
            maxItems: 32,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
          } satisfies KubeOptions,
        ),
      ),
    },
    { description },
  );

const Requirement = (description: string) =>
  Type.Object(
    {
      key: Str("The key the requirement is about."),
      operator: Str("How the key relates to the values (In, NotIn, Exists, ...)."),
      values: Type.Optional(Strings("Values to compare with.")),
    },
    { description },
  );

/** metav1.LabelSelector, with the API's list and map types. */
export const KubeLabelSelector = (description: string) =>
  Type.Object(
    {
      matchLabels: Type.Optional(StrMap("Labels that must all match.")),
      matchExpressions: Type.Optional(
        Atomic(Requirement("A label requirement."), "Requirements that must all hold."),
      ),
    },
    { description, "x-kubernetes-map-type": "atomic" } satisfies KubeOptions,
  );

const NodeSelectorTerm = (description: string) =>
  Type.Object(
    {
      matchExpressions: Type.Optional(
        Atomic(Requirement("A node label requirement."), "Requirements on node labels."),
      ),
      matchFields: Type.Optional(
        Atomic(Requirement("A node field requirement."), "Requirements on node fields."),
      ),
    },
    { description, "x-kubernetes-map-type": "atomic" } satisfies KubeOptions,
  );

const PodAffinityTerm = (description: string) =>
  Type.Object(
    {
      labelSelector: Type.Optional(KubeLabelSelector("Pods the term is about.")),
      namespaceSelector: Type.Optional(KubeLabelSelector("Namespaces the pods are looked for in.")),
      namespaces: Type.Optional(Strings("Namespaces the pods are looked for in, by name.")),
      matchLabelKeys: Type.Optional(Strings("Label keys whose values are taken from the incoming pod.")),
      mismatchLabelKeys: Type.Optional(
        Strings("Label keys whose values must differ from the incoming pod's."),
      ),
      topologyKey: Str("Node label that defines the co-location domain."),
    },
    { description },
  );

const WeightedPodAffinityTerm = (description: string) =>
  Type.Object(
    {
      weight: Int32("Weight, 1-100."),
      podAffinityTerm: PodAffinityTerm("The term."),
    },
    { description },
  );

const PodAffinity = (description: string) =>
  Type.Object(
    {
      requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        Atomic(PodAffinityTerm("A hard term."), "Terms that must hold at scheduling."),
      ),
      preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        Atomic(WeightedPodAffinityTerm("A soft term."), "Terms preferred at scheduling."),
      ),
    },
    { description },
  );

/** corev1.Affinity. */
export const Affinity = (description: string) =>
  Type.Object(
    {
      nodeAffinity: Type.Optional(
        Type.Object(
          {
            requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(
              Type.Object(
                {
                  nodeSelectorTerms: Atomic(
                    NodeSelectorTerm("A term; any may match."),
                    "Terms, any of which must match.",
                  ),
                },
                {
                  description: "Nodes the pods must land on.",
                  "x-kubernetes-map-type": "atomic",
                } satisfies KubeOptions,
              ),
            ),
            preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(
              Atomic(
                Type.Object(
                  {
                    weight: Int32("Weight, 1-100."),
                    preference: NodeSelectorTerm("The preferred nodes."),
                  },
                  { description: "A weighted preference." },
                ),
                "Nodes the pods preferably land on.",
              ),
            ),
          },
          { description: "Node affinity." },
        ),
      ),
      podAffinity: Type.Optional(PodAffinity("Co-location with other pods.")),
      podAntiAffinity: Type.Optional(PodAffinity("Separation from other pods.")),
    },
    { description },
  );

/** One corev1.Toleration. */
export const Toleration = Type.Object(
  {
    key: Type.Optional(Str("Taint key; empty with Exists matches every taint.")),
    operator: Type.Optional(Str("Exists or Equal.")),
    value: Type.Optional(Str("Taint value, for Equal.")),
    effect: Type.Optional(Str("Taint effect to match; all when empty.")),
    tolerationSeconds: Type.Optional(
      Type.Integer({ description: "How long a NoExecute taint is tolerated.", format: "int64" }),
    ),
  },
  { description: "A tolerated taint." },
);

/** One corev1.TopologySpreadConstraint. */
export const TopologySpreadConstraint = Type.Object(
  {
    maxSkew: Int32("Largest allowed difference of pod counts between domains."),
    topologyKey: Str("Node label that defines the domains."),
    whenUnsatisfiable: Str("DoNotSchedule or ScheduleAnyway."),
    labelSelector: Type.Optional(KubeLabelSelector("Pods counted.")),
    matchLabelKeys: Type.Optional(Strings("Label keys whose values are taken from the incoming pod.")),
    minDomains: Type.Optional(Int32("Least number of eligible domains.")),
    nodeAffinityPolicy: Type.Optional(Str("Honor or Ignore the pod's node affinity when counting.")),
    nodeTaintsPolicy: Type.Optional(Str("Honor or Ignore node taints when counting.")),
  },
  { description: "How pods spread over a topology." },
);

/** Where pods are scheduled. */
export const Scheduling = (description: string) =>
  Type.Object(
    {
      affinity: Type.Optional(Affinity("Affinity of the pods.")),
      nodeSelector: Type.Optional(StrMap("Node labels the pods require.")),
      tolerations: Type.Optional(
        Type.Array(Toleration, { description: "Taints the pods tolerate.", maxItems: 64 }),
      ),
      topologySpreadConstraints: Type.Optional(
        Type.Array(TopologySpreadConstraint, { description: "How the pods spread.", maxItems: 32 }),
      ),
    },
    { description },
  );

/** A pod template as upstream 0.5 lets read replicas override it: metadata, resources, scheduling. */
export const PodTemplate = (description: string) =>
  Type.Object(
    {
      metadata: Type.Optional(PodMetadata("Labels and annotations of the pods.")),
      resources: Type.Optional(ResourceRequirementsWithClaims("Resources of the OpenBao container.")),
      scheduling: Type.Optional(Scheduling("Where the pods are scheduled.")),
    },
    { description },
  );
