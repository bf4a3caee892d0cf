import { OpenBaoClusterReason } from "../../../apis/openbaocluster-names.js";
import { invalid, proceed } from "../../../runtime/stages.js";
import { unsupportedFields } from "../unsupported.js";
import { checkClusterSpec } from "../validate/cluster.js";
import { sealPluginProblem } from "../validate/seal-plugins.js";
import { describeEmpty, emptyClusterReferences } from "../validate/secret-refs.js";
import { inlineCredentials } from "../workload/config/secret-config.js";
import type { SpecView } from "../workload/config/spec-view.js";
import type { PassBase, StepResult } from "./context.js";

/**
 * What the schema cannot say (tag vs version, TLS and seal settings that belong together, self-init
 * paths), each problem naming its field; nothing is written for a bad spec.
 */
export function validateStep({ cluster, result }: PassBase): StepResult {
  const problems = checkClusterSpec(
    cluster.metadata.name,
    cluster.spec,
    cluster.metadata.namespace,
    cluster.status?.currentVersion,
  );
  // Admitted (upstream's CRD admits it too) but refused here, before anything is written or rolled.
  const sealPlugin = sealPluginProblem(cluster.spec);
  if (sealPlugin) problems.push(sealPlugin);
  if (problems.length > 0)
    return invalid(
      OpenBaoClusterReason.InvalidSpec,
      problems.map((p) => `${p.field}: ${p.message}`).join("; "),
    );
  result.unsupported = unsupportedFields(cluster.spec);
  // Accepted as upstream accepts them, reported; the parts that need them wait (adminops).
  result.emptySecretReferences = emptyClusterReferences(cluster.spec).map(describeEmpty);
  result.inlineCredentials = inlineCredentials(cluster.spec as unknown as SpecView).map((f) => `spec.${f}`);
  return proceed();
}
