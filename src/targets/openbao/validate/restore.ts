/** Offline checks of one OpenBaoRestore spec, beyond what its CRD says. */
import { credentialNamespaceProblems, restoreCredentialRefs } from "./credentials.js";
import type { FieldProblem } from "./field-problem.js";
import { imageProblem } from "./image.js";
import { isObjectName } from "./values.js";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function checkRestoreSpec(spec: unknown, namespace?: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const add = (field: string, message: string) => problems.push({ field, message });
  if (!isObject(spec)) return [{ field: "spec", message: "is missing or not an object" }];
  const cluster = spec["cluster"];
  if (typeof cluster !== "string" || cluster === "")
    add("spec.cluster", "is required: the OpenBaoCluster to restore into");
  else if (!isObjectName(cluster)) add("spec.cluster", `"${cluster}" is not a valid object name`);
  const source = spec["source"];
  if (!isObject(source)) add("spec.source", "is required: the snapshot's key and target");
  else {
    const key = source["key"];
    if (typeof key !== "string" || key === "")
      add("spec.source.key", "is required: the snapshot's object key");
    else if (key.split("/").some((s) => s === ".." || s === "."))
      add("spec.source.key", `"${key}" must not contain . or .. segments`);
    if (!isObject(source["target"])) add("spec.source.target", "is required: the bucket the snapshot is in");
    else if (typeof source["target"]["bucket"] !== "string" || source["target"]["bucket"] === "")
      add("spec.source.target.bucket", "is required");
  }
  if (spec["overrideOperationLock"] === true && spec["force"] !== true)
    add("spec.overrideOperationLock", "needs force: true");
  if (typeof spec["image"] === "string") {
    const problem = imageProblem(spec["image"]);
    if (problem) add("spec.image", problem);
  }
  problems.push(...credentialNamespaceProblems(restoreCredentialRefs(spec), namespace));
  return problems;
}
