/**
 * `validate --admission-policies`: OpenBaoClusters, OpenBaoRestores and OpenBaoTenants against the
 * rules of the chart's ValidatingAdmissionPolicies (admissionPolicies.enabled), in the words the API
 * server would refuse them with. Offline there is no object before, so the rules of an update
 * (storage class, storage size) pass; the API server checks those. The tenant rule needs the
 * operator's namespace (the chart's release namespace), which the caller names.
 */
import type { ManifestDocument, ManifestProblem } from "../../../runtime/target.js";
import { CLUSTER_POLICY, RESTORE_POLICY, refusals, TENANT_POLICY } from "../policies/rules.js";
import { OPENBAO_GROUP, openBaoDocuments } from "./index.js";

/** The namespace `platform-operator validate` assumes the operator runs in when not told (docs/install.md's). */
export const DEFAULT_OPERATOR_NAMESPACE = "platform-operator-system";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isTenant = (doc: unknown): doc is Obj =>
  isObject(doc) &&
  typeof doc["apiVersion"] === "string" &&
  doc["apiVersion"].startsWith(`${OPENBAO_GROUP}/`) &&
  doc["kind"] === "OpenBaoTenant";

/** OpenBaoTenants among the documents, including the items of a `kind: List`. */
function* tenantDocuments(docs: Iterable<ManifestDocument>) {
  for (const { doc, ...place } of docs) {
    if (isObject(doc) && doc["kind"] === "List" && Array.isArray(doc["items"])) {
      for (const item of doc["items"]) if (isTenant(item)) yield { place, doc: item };
    } else if (isTenant(doc)) yield { place, doc };
  }
}

function label(doc: Obj): string {
  const meta = (doc["metadata"] ?? {}) as { name?: unknown; namespace?: unknown };
  const name = typeof meta.name === "string" && meta.name !== "" ? meta.name : "(unnamed)";
  return `${doc["kind"]} ${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${name}`;
}

export function admissionPolicyProblems(
  docs: Iterable<ManifestDocument>,
  operatorNamespace: string = DEFAULT_OPERATOR_NAMESPACE,
): ManifestProblem[] {
  const all = [...docs];
  const problems: ManifestProblem[] = [];
  for (const { place, doc } of openBaoDocuments(all)) {
    const table = doc["kind"] === "OpenBaoCluster" ? CLUSTER_POLICY : RESTORE_POLICY;
    for (const rule of refusals(table, { object: doc }))
      problems.push({ ...place, object: label(doc), key: table.name, message: rule.message });
  }
  for (const { place, doc } of tenantDocuments(all))
    for (const rule of refusals(TENANT_POLICY, { object: doc, operatorNamespace }))
      problems.push({ ...place, object: label(doc), key: TENANT_POLICY.name, message: rule.message });
  return problems;
}
