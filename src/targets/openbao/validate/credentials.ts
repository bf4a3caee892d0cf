/**
 * Upstream's samples write `credentialsSecretRef.namespace`, though upstream reads every credentials
 * Secret from the object's own namespace (its reference type has no namespace at all). Here too the
 * Secret is read only there, so a namespace that names another one would silently read a different
 * Secret than the manifest means: it is refused, naming the field; the object's own namespace is fine.
 */
import type { FieldProblem } from "./field-problem.js";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** `refs`: field path (from the root) of each credentialsSecretRef and the value found there. */
export function credentialNamespaceProblems(
  refs: readonly (readonly [field: string, ref: unknown])[],
  namespace: string | undefined,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, ref] of refs) {
    if (!isObject(ref) || ref["namespace"] === undefined || ref["namespace"] === "") continue;
    const given = ref["namespace"];
    if (typeof given !== "string") {
      problems.push({ field: `${field}.namespace`, message: "must be a namespace name" });
      continue;
    }
    // Without a namespace (a manifest checked offline), the object lands where it is applied: only
    // the apply knows, so the reconciler checks it then.
    if (namespace === undefined || given === namespace) continue;
    problems.push({
      field: `${field}.namespace`,
      message: `is ${JSON.stringify(given)}, but the Secret is read from the object's own namespace ${JSON.stringify(namespace)} only (as upstream does); drop the field or create the Secret in ${JSON.stringify(namespace)}`,
    });
  }
  return problems;
}

const at = (o: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((x, k) => (isObject(x) ? x[k] : undefined), o);

export function clusterCredentialRefs(spec: unknown): [string, unknown][] {
  return [
    ["spec.backup.target.credentialsSecretRef", at(spec, "backup", "target", "credentialsSecretRef")],
    ["spec.unseal.credentialsSecretRef", at(spec, "unseal", "credentialsSecretRef")],
  ];
}

export function restoreCredentialRefs(spec: unknown): [string, unknown][] {
  return [["spec.source.target.credentialsSecretRef", at(spec, "source", "target", "credentialsSecretRef")]];
}
