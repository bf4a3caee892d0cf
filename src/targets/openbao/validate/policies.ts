/**
 * `validate --admission-policies`: OpenBaoClusters and OpenBaoRestores against the rules of the
 * chart's ValidatingAdmissionPolicies (admissionPolicies.enabled), in the words the API server
 * would refuse them with. Offline there is no object before, so the rules of an update (storage
 * class, storage size) pass; the API server checks those.
 */
import type { ManifestDocument, ManifestProblem } from "../../../runtime/target.js";
import { CLUSTER_POLICY, RESTORE_POLICY, refusals } from "../policies/rules.js";
import { openBaoDocuments } from "./index.js";

export function admissionPolicyProblems(docs: Iterable<ManifestDocument>): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  for (const { place, doc } of openBaoDocuments(docs)) {
    const meta = (doc["metadata"] ?? {}) as { name?: unknown; namespace?: unknown };
    const name = typeof meta.name === "string" && meta.name !== "" ? meta.name : "(unnamed)";
    const object = `${doc["kind"]} ${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${name}`;
    const table = doc["kind"] === "OpenBaoCluster" ? CLUSTER_POLICY : RESTORE_POLICY;
    for (const rule of refusals(table, { object: doc }))
      problems.push({ ...place, object, key: table.name, message: rule.message });
  }
  return problems;
}
