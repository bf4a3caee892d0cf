/**
 * At start, the openbao target looks once at the admission policies the chart installs
 * (admissionPolicies.enabled): each binding must exist, name its policy and deny, and the policy
 * must exist and fail closed. The result sets the gauge openbao_admission_dependencies_ready and is
 * handed to the cluster reconciler for ProductionReady (upstream's AdmissionPoliciesNotReady).
 * Upstream's fourth binding, the tenant provisioner's delegate, has no counterpart yet.
 */
import {
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
} from "../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../runtime/client.js";
import { ApiError } from "../../../runtime/errors.js";
import { admissionDependenciesReady } from "../metrics.js";

/** The policies the target depends on, by upstream's names (the chart prefixes `<release>-`). */
export const ADMISSION_DEPENDENCIES = [
  "validate-openbaocluster",
  "validate-openbaorestore",
  "lock-controller-statefulset-mutations",
  "lock-managed-resource-mutations",
] as const;

export interface AdmissionReadiness {
  ready: boolean;
  /** Empty when ready; else "Admission policies are not ready: <dep>: <issue> | …". */
  summary: string;
  issues: { dependency: string; issue: string }[];
}

export function summarize(issues: AdmissionReadiness["issues"]): AdmissionReadiness {
  const ready = issues.length === 0;
  return {
    ready,
    issues,
    summary: ready
      ? ""
      : `Admission policies are not ready: ${issues.map((i) => `${i.dependency}: ${i.issue}`).join(" | ")}`,
  };
}

interface Binding {
  spec?: { policyName?: string; validationActions?: string[] };
}
interface Policy {
  spec?: { failurePolicy?: string };
}

async function getOrIssue<T>(read: () => Promise<T>): Promise<T | string> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return "not found";
    if (e instanceof ApiError && e.code === 403) return "not readable by the operator (forbidden)";
    return `could not be read: ${(e as Error).message}`;
  }
}

/**
 * Checks the bindings `<prefix><name>`; with no prefix (the chart value off) the policies are not
 * installed and that is the one issue. Sets the gauge and the readiness the status code reads.
 */
export async function checkAdmissionDependencies(
  client: KubeClient,
  prefix: string | undefined,
): Promise<AdmissionReadiness> {
  const issues: AdmissionReadiness["issues"] = [];
  if (prefix === undefined)
    issues.push({
      dependency: "admission policies",
      issue: "not installed (chart value admissionPolicies.enabled)",
    });
  else
    for (const dep of ADMISSION_DEPENDENCIES) {
      const name = `${prefix}${dep}`;
      const binding = await getOrIssue(
        () => client.get(VALIDATING_ADMISSION_POLICY_BINDING, name) as Promise<Binding>,
      );
      if (typeof binding === "string") {
        issues.push({ dependency: name, issue: `binding ${binding}` });
        continue;
      }
      if (binding.spec?.policyName !== name) {
        issues.push({
          dependency: name,
          issue: `binding names policy ${JSON.stringify(binding.spec?.policyName ?? "")}`,
        });
        continue;
      }
      if (!binding.spec.validationActions?.includes("Deny"))
        issues.push({ dependency: name, issue: "binding does not deny (validationActions without Deny)" });
      const policy = await getOrIssue(() => client.get(VALIDATING_ADMISSION_POLICY, name) as Promise<Policy>);
      if (typeof policy === "string") issues.push({ dependency: name, issue: `policy ${policy}` });
      // failurePolicy defaults to Fail.
      else if ((policy.spec?.failurePolicy ?? "Fail") !== "Fail")
        issues.push({
          dependency: name,
          issue: `policy failurePolicy is ${policy.spec?.failurePolicy}, not Fail`,
        });
    }
  const result = summarize(issues);
  admissionDependenciesReady.set(result.ready ? 1 : 0);
  return result;
}
