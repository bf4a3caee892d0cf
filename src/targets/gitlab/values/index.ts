// Effective values of a GitLabCore release, in layers merged deep (spec 001, "Effective values",
// and GitLab's newer valuesFrom): derived from the structured fields (derived.ts), then each
// spec.chart.valuesFrom entry in order, then spec.chart.values, then the operator overrides
// (overrides.ts), which win. Pure: the same input always gives the same values,
// which is what the render cache keys on.
import type { GitLabCoreSpec } from "../../../apis/gitlabcore.js";
import { type DeriveInput, derivedSource, derivedValues } from "./derived.js";
import type { ValuesFromLayer } from "./from-refs.js";
import { isMap, mergeLayer, type Values, type ValuesError } from "./merge.js";
import { operatorOverrides } from "./overrides.js";

export { clickHouseEnabledIn } from "./clickhouse.js";
export {
  CONFIGURE_ENVOY_MIN_CHART,
  DERIVED_FROM,
  derivedValues,
  EXTERNAL_SERVICES_ONLY_CHART,
} from "./derived.js";
export {
  readValuesFrom,
  type ValuesFromLayer,
  type ValuesFromRead,
  type ValuesSourceLookup,
} from "./from-refs.js";
export { domainHostsOf, type GitLabHosts, hostsOf } from "./hostname.js";
export { MAX_DEPTH, type Values, type ValuesError, valueAt } from "./merge.js";
export { operatorOverrides } from "./overrides.js";

export interface EffectiveValuesInput {
  /** metadata.name and metadata.namespace of the GitLabCore (the release name and namespace). */
  name: string;
  namespace: string;
  spec: GitLabCoreSpec;
  /**
   * The chart version about to be rendered (status.targetVersion, or an upgrade step); undefined
   * only offline, when it cannot be known: version-dependent values are then left out.
   */
  chartVersion: string | undefined;
  /** The operator's own ServiceAccount, which the shared-secrets hook runs as. */
  managerServiceAccount?: string | undefined;
  /**
   * spec.chart.valuesFrom as read (values/from-refs.ts), in order; offline, where the objects
   * cannot be read, left out.
   */
  valuesFrom?: readonly ValuesFromLayer[] | undefined;
}

export type EffectiveValues =
  | { ok: true; values: Values; layers: { derived: Values; chart: Values; overrides: Values } }
  | { ok: false; errors: ValuesError[] };

export function effectiveValues(input: EffectiveValuesInput): EffectiveValues {
  const errors: ValuesError[] = [];
  const derived = derivedValues(input satisfies DeriveInput, errors);

  const raw = input.spec.chart?.values;
  let chart: Values = {};
  if (raw !== undefined && raw !== null) {
    if (isMap(raw)) chart = raw as Values;
    else errors.push({ field: "spec.chart.values", message: "must be a map of chart values" });
  }
  // Each valuesFrom entry over the derived values and the entries before it; spec.chart.values
  // over them all.
  let withRefs = derived;
  for (const ref of input.valuesFrom ?? [])
    withRefs = mergeLayer(
      withRefs,
      { values: ref.values, field: ref.field, name: `the values of ${ref.source}` },
      derivedSource,
      errors,
    );
  const withChart = mergeLayer(
    withRefs,
    { values: chart, field: "spec.chart.values", name: "the free-form values" },
    derivedSource,
    errors,
  );
  const overrides = operatorOverrides();
  const values = mergeLayer(
    withChart,
    { values: overrides, field: "spec.chart.values", name: "the operator overrides", replacesMaps: true },
    derivedSource,
    errors,
  );
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, values, layers: { derived, chart, overrides } };
}
