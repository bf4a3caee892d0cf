/**
 * The labels and annotations a cluster's pods carry beyond the operator's own: `spec.podMetadata`
 * on every OpenBao pod (voters and read replicas), and `spec.readReplicas.template.metadata` on the
 * read replicas only, over it (upstream 0.5's meaning). Pure: also run on manifests at admission.
 *
 * The operator's keys win. Its labels select the pods (StatefulSets, Services, PDBs, informers) and
 * OpenBao's service registration writes its own state labels, which the active Service selects on:
 * a user value there would misroute traffic or orphan pods. Its annotations roll the pods when the
 * config changes. Such keys are left out of the pod template and named by {@link ignoredPodMetadata}
 * (upstream also skips them, silently).
 */
import {
  ANNOTATION_CONFIG_HASH,
  ANNOTATION_RESTART_AT,
  Component,
  type ComponentName,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_NAME,
  LABEL_OPENBAO_ACTIVE,
  LABEL_OPENBAO_INITIALIZED,
  LABEL_OPENBAO_PERF_STANDBY,
  LABEL_OPENBAO_SEALED,
  LABEL_OPENBAO_VERSION,
  LABEL_REVISION,
} from "../../identity.js";

type Obj = Record<string, unknown>;
type StrMap = Record<string, string>;

const RESERVED_LABELS: ReadonlySet<string> = new Set([
  LABEL_NAME,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  LABEL_REVISION,
  LABEL_OPENBAO_ACTIVE,
  LABEL_OPENBAO_SEALED,
  LABEL_OPENBAO_INITIALIZED,
  LABEL_OPENBAO_PERF_STANDBY,
  LABEL_OPENBAO_VERSION,
]);
const RESERVED_ANNOTATIONS: ReadonlySet<string> = new Set([ANNOTATION_CONFIG_HASH, ANNOTATION_RESTART_AT]);

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The metadata blocks that apply to `component`'s pods, lowest precedence first, with their field. */
function sources(spec: unknown, component: ComponentName): { field: string; meta: Obj }[] {
  if (!isObject(spec)) return [];
  const out: { field: string; meta: Obj }[] = [];
  if (isObject(spec["podMetadata"])) out.push({ field: "spec.podMetadata", meta: spec["podMetadata"] });
  const template = isObject(spec["readReplicas"]) ? spec["readReplicas"]["template"] : undefined;
  if (component === Component.ReadReplica && isObject(template) && isObject(template["metadata"]))
    out.push({ field: "spec.readReplicas.template.metadata", meta: template["metadata"] });
  return out;
}

/** String entries of a map field; anything else is the schema's to refuse. */
function entries(meta: Obj, key: "labels" | "annotations"): [string, string][] {
  const m = meta[key];
  if (!isObject(m)) return [];
  return Object.entries(m).filter((e): e is [string, string] => typeof e[1] === "string");
}

/**
 * The pod template's labels and annotations: the user's (podMetadata, then the read-replica
 * template's) with the operator's `own` laid over them, reserved keys dropped even when the
 * operator does not set them on this pod (the revision label, the restart annotation).
 */
export function podTemplateMetadata(
  spec: unknown,
  component: ComponentName,
  own: { labels: StrMap; annotations: StrMap },
): { labels: StrMap; annotations: StrMap } {
  const labels: StrMap = {};
  const annotations: StrMap = {};
  for (const { meta } of sources(spec, component)) {
    for (const [k, v] of entries(meta, "labels")) if (!RESERVED_LABELS.has(k)) labels[k] = v;
    for (const [k, v] of entries(meta, "annotations")) if (!RESERVED_ANNOTATIONS.has(k)) annotations[k] = v;
  }
  return { labels: { ...labels, ...own.labels }, annotations: { ...annotations, ...own.annotations } };
}

/**
 * One sentence per user key the pods will not carry because the operator owns it, naming the field,
 * for admission warnings. Read replicas see both blocks, so both are checked.
 */
export function ignoredPodMetadata(spec: unknown): string[] {
  const out: string[] = [];
  for (const { field, meta } of sources(spec, Component.ReadReplica)) {
    for (const [k] of entries(meta, "labels"))
      if (RESERVED_LABELS.has(k))
        out.push(
          `${field}.labels["${k}"]: ignored; the operator or OpenBao sets this label and selects the pods by it`,
        );
    for (const [k] of entries(meta, "annotations"))
      if (RESERVED_ANNOTATIONS.has(k))
        out.push(`${field}.annotations["${k}"]: ignored; the operator sets this annotation to roll the pods`);
  }
  return out;
}
