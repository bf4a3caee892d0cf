import type { OpenBaoClusterSpec } from "../../../apis/openbaocluster.js";

/**
 * A Hardened cluster's Jobs may reach only what spec.network.egressRules allows (their NetworkPolicy
 * has no catch-all), so a Job that needs the object store is refused before it starts rather than
 * left to time out: the message to show, or undefined when the Job may run. Pure.
 */
export function egressRulesMissing(
  spec: Pick<OpenBaoClusterSpec, "profile" | "network">,
  job: "backup" | "pre-upgrade snapshot" | "restore",
): string | undefined {
  if (spec.profile !== "Hardened" || (spec.network?.egressRules?.length ?? 0) > 0) return undefined;
  return `the Hardened profile gives the ${job} Job no way out of the namespace but spec.network.egressRules, which is empty: add a rule that reaches the object store`;
}
