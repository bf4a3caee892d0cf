/**
 * The webhook's decision on an OpenBaoCluster or OpenBaoRestore: the CRD's schema, then the
 * offline checks `validate` runs (seal blocks OpenBao would refuse, self-init requests, the
 * version and image pair, a restore's cluster and snapshot): what the CRD's CEL rules cannot say;
 * and profile Hardened's refusals from the admission rule table (policies/hardened.ts), the same
 * rules the chart's validate-openbaocluster policy evaluates, so a cluster installed without the
 * policies refuses the same objects.
 */
import { documentShape } from "../../apis/object-check.js";
import type { AdmissionProblem, AdmissionRequest, AdmissionVerdict } from "../../runtime/admission.js";
import { describeDeprecation, normaliseClusterSpec } from "./normalise.js";
import { CLUSTER_POLICY } from "./policies/rules.js";
import { upstreamRefusals } from "./upstream-refusals.js";
import { checkClusterSpec } from "./validate/cluster.js";
import { checkRestoreSpec } from "./validate/restore.js";
import { ignoredPodMetadata } from "./workload/statefulsets/pod-metadata.js";

export function openBaoVerdict(request: AdmissionRequest): AdmissionVerdict {
  if (request.operation === "DELETE") return { errors: [], warnings: [] };
  const object = request.object as { spec?: unknown; status?: { currentVersion?: unknown } } | undefined;
  // On an update the API server hands admission the stored status: the release that runs now.
  const running = object?.status?.currentVersion;
  const schema: AdmissionProblem[] = documentShape(object).errors.map((e) => ({
    field: e.path || undefined,
    message: e.message,
  }));
  const own: AdmissionProblem[] = (
    request.kind.kind === "OpenBaoCluster"
      ? checkClusterSpec(
          request.name,
          object?.spec,
          request.namespace,
          typeof running === "string" ? running : undefined,
        )
      : checkRestoreSpec(object?.spec, request.namespace)
  ).map((p) => ({ field: p.field, message: p.message }));
  if (request.kind.kind === "OpenBaoCluster") own.push(...hardenedRefusals(object, request.oldObject));
  // The kind's own words win over the schema's for the same field.
  const fields = new Set(own.map((p) => p.field));
  // Paths upstream removed in 0.5 are admitted one more step, each with a warning naming its
  // replacement; so are values upstream 0.5 refuses that earlier manifests leave out.
  const warnings = [
    ...(request.kind.kind === "OpenBaoCluster"
      ? normaliseClusterSpec(object?.spec).deprecated.map(describeDeprecation)
      : []),
    ...upstreamRefusals(object?.spec),
    // Pod labels and annotations the operator owns are left off the pods; said, not refused.
    ...(request.kind.kind === "OpenBaoCluster" ? ignoredPodMetadata(object?.spec) : []),
  ];
  return { errors: [...schema.filter((p) => !p.field || !fields.has(p.field)), ...own], warnings };
}

/** The rule table's rules the webhook shares with the policy (Hardened's refusals), by field. */
export function hardenedRefusals(object: unknown, oldObject?: unknown): AdmissionProblem[] {
  const input = oldObject === undefined ? { object } : { object, oldObject };
  return CLUSTER_POLICY.rules
    .filter((r) => r.webhook && !r.admits(input))
    .map((r) => ({ field: r.field, message: r.message }));
}
