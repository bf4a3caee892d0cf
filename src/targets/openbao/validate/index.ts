/**
 * `platform-operator validate` for OpenBaoCluster and OpenBaoRestore manifests: each object's own
 * checks, plus names repeated across the files (two objects with one namespace/name would overwrite
 * each other on apply). Other kinds' documents are left to their targets.
 */
import type { ManifestDocument, ManifestPlace, ManifestProblem } from "../../../runtime/target.js";
import { checkClusterSpec } from "./cluster.js";
import type { FieldProblem } from "./field-problem.js";
import { checkRestoreSpec } from "./restore.js";
import { emptyClusterReferences, emptyRestoreReferences } from "./secret-refs.js";

/** The API group, spelled here so `validate` does not load the kinds' schemas (a unit test holds it to theirs). */
export const OPENBAO_GROUP = "openbao.org";
const KINDS = ["OpenBaoCluster", "OpenBaoRestore"] as const;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function isOpenBao(doc: unknown): doc is Obj {
  return (
    isObject(doc) &&
    typeof doc["apiVersion"] === "string" &&
    doc["apiVersion"].startsWith(`${OPENBAO_GROUP}/`) &&
    (KINDS as readonly unknown[]).includes(doc["kind"])
  );
}

// `kind: List` is what `kubectl get -o yaml` prints.
export function* openBaoDocuments(
  docs: Iterable<ManifestDocument>,
): Generator<{ place: ManifestPlace; doc: Obj }> {
  for (const { doc, ...place } of docs) {
    if (isObject(doc) && doc["kind"] === "List" && Array.isArray(doc["items"])) {
      for (const item of doc["items"]) if (isOpenBao(item)) yield { place, doc: item };
    } else if (isOpenBao(doc)) yield { place, doc };
  }
}

export function validateOpenBaoDocuments(docs: Iterable<ManifestDocument>): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const seen = new Map<string, ManifestPlace>();
  for (const { place, doc } of openBaoDocuments(docs)) {
    const metadata = isObject(doc["metadata"]) ? doc["metadata"] : {};
    const name =
      typeof metadata["name"] === "string" && metadata["name"] !== "" ? metadata["name"] : undefined;
    const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : undefined;
    const object = `${doc["kind"]} ${namespace ? `${namespace}/` : ""}${name ?? "(unnamed)"}`;
    const push = (p: FieldProblem) => problems.push({ ...place, object, key: p.field, message: p.message });
    if (name === undefined) push({ field: "metadata.name", message: "is required" });
    else {
      const id = `${doc["kind"]}/${namespace ?? ""}/${name}`;
      const first = seen.get(id);
      if (first)
        push({
          field: "metadata.name",
          message: `is also used by the object at ${first.file}${first.line === undefined ? "" : `:${first.line}`}`,
        });
      else seen.set(id, place);
    }
    const found =
      doc["kind"] === "OpenBaoCluster"
        ? checkClusterSpec(name, doc["spec"], namespace)
        : checkRestoreSpec(doc["spec"], namespace);
    for (const p of found) push(p);
    // Accepted by the API server (upstream's default name ""), so a warning; it says what waits.
    const unnamed =
      doc["kind"] === "OpenBaoCluster"
        ? emptyClusterReferences(doc["spec"])
        : emptyRestoreReferences(doc["spec"]);
    for (const p of unnamed)
      problems.push({ ...place, object, key: p.field, message: p.message, severity: "warning" });
  }
  return problems;
}
