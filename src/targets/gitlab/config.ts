import { asBool, asDuration, asSection, asString } from "../../runtime/configvalues.js";
import { ConfigError } from "../../runtime/target.js";

/**
 * The gitlab target's configuration section. Where charts come from is the environment's business
 * (HELM_CHARTS, ENABLE_DYNAMIC_CHART_PULL, DYNAMIC_CHART_*), as the reconciler settings describe.
 */
export interface GitLabTargetConfig {
  /** GitLabCores reconciled at once. */
  concurrency: number;
  /** Next pass after a successful one (30 s). */
  requeueMs: number;
  /** Next pass while an upgrade steps through minors or waits for migrations (5 s). */
  stepRequeueMs: number;
  /** The longest one hook may run (10 minutes). */
  hookTimeoutMs: number;
  /**
   * The operator's own ServiceAccount name; the shared-secrets hook runs as it unless the chart
   * values say otherwise.
   */
  serviceAccountName?: string;
  /** Decide everything, write nothing to the release: what would be hooked, applied and pruned goes to the Drifted condition. */
  observeOnly: boolean;
}

const SECTION_KEYS = [
  "concurrency",
  "requeueInterval",
  "stepInterval",
  "hookTimeout",
  "serviceAccountName",
  "observeOnly",
] as const;

export function parseGitLabConfig(raw: unknown, field: string): GitLabTargetConfig {
  const root = asSection(raw ?? {}, field, SECTION_KEYS);
  const concurrency = root["concurrency"] ?? 2;
  if (
    typeof concurrency !== "number" ||
    !Number.isInteger(concurrency) ||
    concurrency < 1 ||
    concurrency > 16
  )
    throw new ConfigError(`${field}.concurrency`, "must be a whole number from 1 to 16");
  const duration = (key: string, dflt: number) =>
    root[key] === undefined ? dflt : asDuration(root[key], `${field}.${key}`);
  const observeOnly = asBool(root["observeOnly"] ?? false, `${field}.observeOnly`);
  const out: GitLabTargetConfig = {
    concurrency,
    requeueMs: duration("requeueInterval", 30_000),
    stepRequeueMs: duration("stepInterval", 5_000),
    hookTimeoutMs: duration("hookTimeout", 600_000),
    observeOnly,
  };
  for (const key of ["requeueInterval", "stepInterval", "hookTimeout"] as const)
    if (root[key] !== undefined && asDuration(root[key], `${field}.${key}`) < 100)
      throw new ConfigError(`${field}.${key}`, "must be at least 100ms");
  if (root["serviceAccountName"] !== undefined)
    out.serviceAccountName = asString(root["serviceAccountName"], `${field}.serviceAccountName`);
  return out;
}
