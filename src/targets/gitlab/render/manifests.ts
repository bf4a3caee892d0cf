import { parseAllDocuments } from "yaml";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../../apis/gitlabcore-names.js";
import { RenderError } from "./errors.js";
import { compareBytes, compareKinds, kindRank as rankOf } from "./kind-order.js";
import type { RenderedHook, RenderedObject } from "./types.js";

export const HOOK_ANNOTATION = "helm.sh/hook";
export const HOOK_WEIGHT_ANNOTATION = "helm.sh/hook-weight";
export const HOOK_DELETE_POLICY_ANNOTATION = "helm.sh/hook-delete-policy";

/** Position of a kind in Helm's install order (see kind-order.ts); kinds Helm does not list go last. */
export const kindRank = (kind: string): number => rankOf(kind, "install");

/**
 * The order Helm runs one event's hooks in. Helm sorts hooks stably by kind, then stably by weight
 * and name (pkg/action/hooks.go hookByWeight), so the result is: weight, then name, then kind, then
 * the render's order.
 */
export function compareHooks(a: RenderedHook, b: RenderedHook): number {
  return (
    a.weight - b.weight ||
    compareBytes(a.object.metadata.name, b.object.metadata.name) ||
    compareKinds(a.object.kind, b.object.kind)
  );
}

// Cluster-scoped kinds a chart may render whose API the cluster may not serve yet (so discovery
// cannot tell); discovery's answer wins for everything it knows.
const WELL_KNOWN_CLUSTER_SCOPED = new Set([
  "v1/Namespace",
  "v1/Node",
  "v1/PersistentVolume",
  "apiextensions.k8s.io/v1/CustomResourceDefinition",
  "rbac.authorization.k8s.io/v1/ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
  "storage.k8s.io/v1/StorageClass",
  "storage.k8s.io/v1/CSIDriver",
  "scheduling.k8s.io/v1/PriorityClass",
  "networking.k8s.io/v1/IngressClass",
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration",
  "apiregistration.k8s.io/v1/APIService",
  "gateway.networking.k8s.io/v1/GatewayClass",
  "gateway.networking.k8s.io/v1beta1/GatewayClass",
  "cert-manager.io/v1/ClusterIssuer",
]);

export interface SplitOptions {
  releaseName: string;
  namespace: string;
  /** `<apiVersion>/<Kind>` of cluster-scoped kinds from discovery. */
  clusterScoped?: readonly string[];
}

export interface SplitResult {
  objects: RenderedObject[];
  hooks: RenderedHook[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The template a document came from, from the `# Source:` comment helm writes above it. */
function sourceOf(comment: string | null | undefined): string | undefined {
  return comment ? /Source:\s*(\S+)/.exec(comment)?.[1] : undefined;
}

function stringMap(v: unknown, where: string, field: string): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw new RenderError(`${where}: metadata.${field} must be a map of strings`);
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string") throw new RenderError(`${where}: metadata.${field}.${k} must be a string`);
  }
  return v as Record<string, string>;
}

/** Checks the parts of an object the reconciler relies on; errors name the template, never content. */
function asObject(doc: unknown, where: string): RenderedObject {
  if (!isRecord(doc)) throw new RenderError(`${where}: a document is not a Kubernetes object (not a map)`);
  const { apiVersion, kind, metadata } = doc;
  if (typeof apiVersion !== "string" || apiVersion === "")
    throw new RenderError(`${where}: apiVersion is missing`);
  if (typeof kind !== "string" || kind === "") throw new RenderError(`${where}: kind is missing`);
  if (!isRecord(metadata)) throw new RenderError(`${where}: ${kind} has no metadata`);
  if (typeof metadata["name"] !== "string" || metadata["name"] === "")
    throw new RenderError(`${where}: ${kind} has no metadata.name`);
  if (metadata["namespace"] !== undefined && typeof metadata["namespace"] !== "string")
    throw new RenderError(`${where}: ${kind} ${metadata["name"]}: metadata.namespace must be a string`);
  stringMap(metadata["labels"], `${where}: ${kind} ${metadata["name"]}`, "labels");
  stringMap(metadata["annotations"], `${where}: ${kind} ${metadata["name"]}`, "annotations");
  return doc as RenderedObject;
}

const list = (v: string | undefined): string[] =>
  (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

function hookOf(object: RenderedObject): RenderedHook | undefined {
  const annotations = object.metadata.annotations ?? {};
  const events = list(annotations[HOOK_ANNOTATION]);
  if (events.length === 0) return undefined;
  // Helm reads the weight with Atoi and treats anything unparsable as 0.
  const raw = (annotations[HOOK_WEIGHT_ANNOTATION] ?? "").trim();
  const weight = /^[-+]?\d{1,9}$/.test(raw) ? Number(raw) : 0;
  const declared = list(annotations[HOOK_DELETE_POLICY_ANNOTATION]);
  return {
    object,
    events,
    weight,
    deletePolicies: declared.length > 0 ? declared : ["before-hook-creation"],
  };
}

// Helm sorts the manifests stably by kind alone: within a kind they keep the order helm printed
// them in (template path, then position in the file), and unlisted kinds compare as bytes.
const compareObjects = (a: RenderedObject, b: RenderedObject) => compareKinds(a.kind, b.kind);

/**
 * Splits `helm template` output into objects and hooks: empty documents dropped, `List` kinds
 * flattened, namespaced objects without a namespace put in the release's, the release labels stamped
 * (the finalizer finds cluster-scoped objects by them). Pure.
 */
export function splitManifests(output: string, opts: SplitOptions): SplitResult {
  const clusterScoped = new Set(opts.clusterScoped ?? []);
  const isClusterScoped = (o: RenderedObject) => {
    const key = `${o.apiVersion}/${o.kind}`;
    return clusterScoped.has(key) || WELL_KNOWN_CLUSTER_SCOPED.has(key);
  };
  const objects: RenderedObject[] = [];
  const hooks: RenderedHook[] = [];
  const seen = new Set<string>();
  // Rendered documents are the chart's output, not trusted input: bound aliases (billion laughs).
  const docs = parseAllDocuments(output, { uniqueKeys: false });
  if (!Array.isArray(docs)) return { objects, hooks }; // an empty stream
  docs.forEach((doc, i) => {
    // The comment sits on the document or, right after `---`, on its first node.
    const contents = doc.contents as { commentBefore?: string | null } | null;
    const where = sourceOf(doc.commentBefore) ?? sourceOf(contents?.commentBefore) ?? `document ${i + 1}`;
    if (doc.errors.length > 0)
      throw new RenderError(
        `${where}: not valid YAML (${doc.errors[0]!.code} at line ${doc.errors[0]!.linePos?.[0]?.line ?? "?"})`,
      );
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      throw new RenderError(`${where}: cannot be read (${(e as Error).name})`);
    }
    if (value === null || value === undefined) return;
    if (isRecord(value) && Object.keys(value).length === 0) return;
    const items =
      isRecord(value) && value["kind"] === "List" && Array.isArray(value["items"]) ? value["items"] : [value];
    for (const item of items) {
      const object = asObject(item, where);
      if (!isClusterScoped(object) && !object.metadata.namespace) object.metadata.namespace = opts.namespace;
      if (isClusterScoped(object)) delete object.metadata.namespace;
      object.metadata.labels = {
        ...object.metadata.labels,
        [GitLabReleaseNameLabel]: opts.releaseName,
        [GitLabReleaseNamespaceLabel]: opts.namespace,
      };
      const id = `${object.apiVersion}/${object.kind}/${object.metadata.namespace ?? ""}/${object.metadata.name}`;
      const hook = hookOf(object);
      // Two templates rendering one object would fight on every apply; helm refuses this on install.
      if (!hook && seen.has(id))
        throw new RenderError(`${where}: ${object.kind} ${object.metadata.name} is rendered twice`);
      if (hook) hooks.push(hook);
      else {
        seen.add(id);
        objects.push(object);
      }
    }
  });
  objects.sort(compareObjects);
  hooks.sort(compareHooks);
  return { objects, hooks };
}
