/**
 * The webhook's decision on a VaultSeed: what `validate` says of one object (its CRD's schema, then
 * compileSeed, the function the reconciler plans with), `path` immutable on update, and what needs
 * the other objects, read from the target's informer cache: a path another object seeds, a
 * reference cycle through this one, and an application namespace's prefixes (the controller's
 * refusal, as `validate --config` gives it). The same functions as `validate`, so the same words.
 */
import { documentShape } from "../../apis/object-check.js";
import type { AdmissionProblem, AdmissionRequest, AdmissionVerdict } from "../../runtime/admission.js";
import type { ManifestDocument } from "../../runtime/target.js";
import type { KubeObject } from "../../runtime/types.js";
import type { ApplicationScopes } from "./scope.js";
import { isPlainObject } from "./tree.js";
import { compileSeed, crossObjectProblems, seedWarnings, validateApplicationScopes } from "./validate.js";

const SUBJECT = "this request";
const CACHED = "in the cluster";

/** A problem of compileSeed keyed by a data key names its field under spec.data. */
function asField(key: string | undefined, message: string): AdmissionProblem {
  if (key === undefined) return { message };
  if (key.startsWith("spec.")) return { field: key, message };
  const own = message.startsWith(`${key}: `) ? message.slice(key.length + 2) : message;
  return { field: `spec.data.${key}`, message: own };
}

/** Keeps the kind's own words for a field; the schema's line goes when both name the same field. */
export function merged(schema: AdmissionProblem[], own: AdmissionProblem[]): AdmissionProblem[] {
  const fields = new Set(
    own.map((p) => p.field ?? /^((?:spec|metadata)[\w.[\]-]*)/.exec(p.message)?.[1]).filter(Boolean),
  );
  return [...schema.filter((p) => !p.field || !fields.has(p.field)), ...own];
}

export function vaultSeedVerdict(
  request: AdmissionRequest,
  cached: () => Iterable<KubeObject>,
  scopes: ApplicationScopes = new Map(),
): AdmissionVerdict {
  if (request.operation === "DELETE") return { errors: [], warnings: [] };
  const object = request.object;
  const schema = documentShape(object).errors.map((e) => ({
    field: e.path || undefined,
    message: e.message,
  }));
  const spec = isPlainObject(object) ? object["spec"] : undefined;
  const compiled = compileSeed(spec);
  const own = compiled.ok ? [] : compiled.problems.map((p) => asField(p.key, p.message));
  const old = request.oldObject as { spec?: { path?: unknown } } | undefined;
  const path = isPlainObject(spec) ? spec["path"] : undefined;
  if (request.operation === "UPDATE" && old?.spec?.path !== undefined && old.spec.path !== path)
    own.push({
      field: "spec.path",
      message: `is immutable (was ${String(old.spec.path)}): delete this VaultSeed and create another for the new path`,
    });
  const subject: ManifestDocument = { file: SUBJECT, doc: object };
  const ns = request.namespace ?? "";
  for (const p of validateApplicationScopes([subject], scopes)) own.push(asField(p.key, p.message));
  const others: ManifestDocument[] = [];
  for (const o of cached()) {
    // The object itself, as stored before this update, is not another object.
    if ((o.metadata.namespace ?? "") === ns && o.metadata.name === request.name) continue;
    const other: ManifestDocument = { file: CACHED, doc: o };
    // An object its application namespace may not have claims no path, as in the controller.
    if (validateApplicationScopes([other], scopes).length > 0) continue;
    others.push(other);
  }
  for (const p of crossObjectProblems(subject, others)) own.push({ field: p.key, message: p.message });
  return {
    errors: merged(schema, own),
    warnings: seedWarnings(spec).map((w) => `${w.key}: ${w.message}`),
  };
}
