/**
 * The CEL half of the rule table (rules.ts) as the chart reads it: deploy/chart/platform-operator/
 * admission/openbao.json, written by `npm run policies:write` and held to the table by a unit
 * test, so the chart's ValidatingAdmissionPolicies and `validate` print the same words.
 */
import { POLICY_TABLES } from "./rules.js";

export const CHART_POLICY_FILE = "deploy/chart/platform-operator/admission/openbao.json";

export interface ChartPolicy {
  resource: string;
  /** Variables the chart template supplies before `variables` (see PolicyTable.parameters). */
  parameters: string[];
  variables: { name: string; expression: string }[];
  validations: { expression: string; message: string }[];
}

export function chartPolicyData(): Record<string, ChartPolicy> {
  const out: Record<string, ChartPolicy> = {};
  for (const t of POLICY_TABLES)
    out[t.name] = {
      resource: t.resource,
      parameters: t.parameters ?? [],
      variables: t.variables,
      validations: t.rules.map((r) => ({ expression: r.cel, message: r.message })),
    };
  return out;
}

export function chartPolicyJson(): string {
  return `${JSON.stringify(chartPolicyData(), null, 2)}\n`;
}
