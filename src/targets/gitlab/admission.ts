/**
 * The webhook's decision on a GitLabCore: validateGitLabCore, what `validate` runs (the schema,
 * the version union's rules and versionRef exclusivity, the effective values of all three layers),
 * plus the downgrade refusal against the deployed status.version, and the values against the
 * chart's values.schema.json when that chart is in the charts directory. A chart that is not there
 * is a warning: pulling one inside an admission request would outlast its timeout.
 */
import { documentShape } from "../../apis/object-check.js";
import type { AdmissionProblem, AdmissionRequest, AdmissionVerdict } from "../../runtime/admission.js";
import { validateGitLabCore } from "./validate.js";

export function gitLabCoreVerdict(
  request: AdmissionRequest,
  options: { chartsDir?: string | undefined; managerServiceAccount?: string | undefined },
): AdmissionVerdict {
  if (request.operation === "DELETE") return { errors: [], warnings: [] };
  const old = request.oldObject as { status?: { version?: unknown } } | undefined;
  const deployed = typeof old?.status?.version === "string" ? old.status.version : undefined;
  const found = validateGitLabCore(request.object, { ...options, deployed, missingChart: "warning" });
  const errors: AdmissionProblem[] = [];
  const warnings: string[] = [];
  for (const p of found) {
    if (p.severity === "warning") warnings.push(p.field ? `${p.field}: ${p.message}` : p.message);
    else errors.push({ field: p.field, message: p.message });
  }
  if (!options.chartsDir)
    warnings.push("no charts directory: the values are not checked against the chart's values.schema.json");
  // validateGitLabCore checks the schema with the kind's TypeBox twin; the CRD's own check adds
  // what only the object's envelope shows (metadata), for fields it did not already name.
  const fields = new Set(errors.map((p) => p.field));
  const schema = documentShape(request.object)
    .errors.filter((e) => e.path.startsWith("metadata") && !fields.has(e.path))
    .map((e) => ({ field: e.path, message: e.message }));
  return { errors: [...schema, ...errors], warnings };
}
