/**
 * Is this document an object of one of our kinds, well-formed as the API server sees it? The first
 * step of every check of our kinds (`validate`, the admission webhook): what the API server would
 * refuse with strict field validation before any of the kind's own rules. The kind's semantic
 * checks come after, and run whatever this finds, so a single run reports everything.
 */
import { type KindDescriptor, kindFor } from "./index.js";
import { jsonType, structuralErrors } from "./structural.js";
import type { FieldError } from "./validate.js";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

// The fields of ObjectMeta a client may send; the API server refuses others under strict validation.
const OBJECT_META_FIELDS = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);
const ROOT_FIELDS = new Set(["apiVersion", "kind", "metadata", "spec", "status"]);
// RFC 1123 subdomain: what metadata.name of a custom resource must be.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What a document is, in words, for "is not a Kubernetes object" messages. */
function describeValue(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (typeof v === "string") return v.length > 40 ? "a string" : `the string ${JSON.stringify(v)}`;
  return `a ${jsonType(v)}`;
}

export interface DocumentShape {
  /** Our kind the document claims to be (by `kind`), when it is one. */
  kind?: KindDescriptor;
  errors: FieldError[];
}

/**
 * Any document of a manifest: not an object at all, an object without `apiVersion` or `kind`, or
 * one of our kinds that breaks its CRD's schema. Objects of other kinds are not looked into.
 */
export function documentShape(doc: unknown): DocumentShape {
  if (!isObject(doc))
    return {
      errors: [
        {
          path: "",
          message: `is not a Kubernetes object: ${describeValue(doc)}, where a mapping with apiVersion, kind and metadata was expected`,
        },
      ],
    };
  const kind = typeof doc["kind"] === "string" ? kindFor(doc["kind"]) : undefined;
  // `kindFor` also answers to plurals; only the Kind name itself makes a document ours, and only in
  // our group (or with no apiVersion at all): another group may well have a kind of the same name.
  const apiVersion = doc["apiVersion"];
  const ourGroup = typeof apiVersion !== "string" || apiVersion.split("/")[0] === kind?.group;
  if (kind && kind.kind === doc["kind"] && ourGroup) return { kind, errors: objectErrors(kind, doc) };
  const errors: FieldError[] = [];
  if (typeof doc["apiVersion"] !== "string" || doc["apiVersion"] === "")
    errors.push({ path: "apiVersion", message: "is missing: every Kubernetes object names its apiVersion" });
  if (typeof doc["kind"] !== "string" || doc["kind"] === "")
    errors.push({ path: "kind", message: "is missing: every Kubernetes object names its kind" });
  return { errors };
}

/** Every structural problem of an object of `kind`, the CRD's schema and ObjectMeta's rules. */
export function objectErrors(kind: KindDescriptor, doc: Obj): FieldError[] {
  const errors: FieldError[] = [];
  if (doc["apiVersion"] === undefined)
    errors.push({
      path: "apiVersion",
      message: `is missing: a ${kind.kind} has apiVersion ${kind.apiVersion}`,
    });
  else if (doc["apiVersion"] !== kind.apiVersion)
    errors.push({
      path: "apiVersion",
      message: `must be ${kind.apiVersion}, not ${JSON.stringify(doc["apiVersion"])} (this operator serves no other version)`,
    });
  for (const key of Object.keys(doc))
    if (!ROOT_FIELDS.has(key))
      errors.push({ path: key, message: "unknown field: the schema does not declare it" });
  errors.push(...metadataErrors(kind, doc["metadata"]));
  const schema = kind.crd.spec.versions[0]!.schema.openAPIV3Schema;
  // status is the operator's to write, through its subresource: a manifest's status is ignored.
  const specSchema = schema.properties?.["spec"];
  if (specSchema) {
    if (doc["spec"] === undefined) {
      if (schema.required?.includes("spec")) errors.push({ path: "spec", message: "is required" });
    } else errors.push(...structuralErrors(specSchema, doc["spec"], "spec"));
  }
  return errors;
}

function metadataErrors(kind: KindDescriptor, metadata: unknown): FieldError[] {
  if (metadata === undefined)
    return [{ path: "metadata", message: "is missing: an object needs metadata with at least a name" }];
  if (!isObject(metadata))
    return [{ path: "metadata", message: `must be a mapping, not ${jsonType(metadata)}` }];
  const errors: FieldError[] = [];
  for (const key of Object.keys(metadata))
    if (!OBJECT_META_FIELDS.has(key))
      errors.push({ path: `metadata.${key}`, message: "unknown field: ObjectMeta has no such field" });
  const name = metadata["name"];
  if (name === undefined || name === "") {
    if (typeof metadata["generateName"] !== "string" || metadata["generateName"] === "")
      errors.push({ path: "metadata.name", message: "is missing (or set metadata.generateName)" });
  } else if (typeof name !== "string") errors.push({ path: "metadata.name", message: "must be a string" });
  else if (name.length > 253 || !DNS_SUBDOMAIN.test(name))
    errors.push({
      path: "metadata.name",
      message:
        "must be a DNS subdomain: at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
    });
  const namespace = metadata["namespace"];
  if (namespace !== undefined) {
    if (!kind.namespaced)
      errors.push({ path: "metadata.namespace", message: `must not be set: ${kind.kind} is cluster-scoped` });
    else if (typeof namespace !== "string" || namespace.length > 63 || !DNS_LABEL.test(namespace))
      errors.push({ path: "metadata.namespace", message: "must be a DNS label (a namespace name)" });
  }
  for (const map of ["labels", "annotations"] as const) {
    const value = metadata[map];
    if (value === undefined) continue;
    if (!isObject(value)) errors.push({ path: `metadata.${map}`, message: "must be a map of strings" });
    else
      for (const [k, v] of Object.entries(value))
        if (typeof v !== "string")
          errors.push({ path: `metadata.${map}.${k}`, message: `must be a string, not ${jsonType(v)}` });
  }
  return errors;
}
