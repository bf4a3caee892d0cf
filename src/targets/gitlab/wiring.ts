import type { GitLabCore } from "../../apis/gitlabcore.js";
import { type GitLabCoreReasonType, GitLabCoreReason as R } from "../../apis/gitlabcore-names.js";
import type { Manager } from "../../runtime/manager.js";
import { ChartNotFoundError, ChartSource, chartSourceConfigFromEnv } from "./charts/index.js";
import type { GitLabTargetConfig } from "./config.js";
import { renders } from "./metrics.js";
import type { Capabilities, ReleaseSource, VersionPolicy } from "./reconciler.js";
import { capabilitiesFromDiscovery, HelmRunner, RenderCache, renderChartCached } from "./render/index.js";
import { effectiveValues, readValuesFrom, type ValuesSourceLookup } from "./values/index.js";
import { planUpgradePath, resolveTargetVersion } from "./version/index.js";

// Glue between the reconciler and the renderer (render/, charts/) and the version logic (version/):
// the reconciler sees only ReleaseSource and VersionPolicy, so its tests can give others.

export const defaultVersionPolicy: VersionPolicy = {
  resolve(input) {
    const r = resolveTargetVersion(input);
    return r.ok ? { version: r.version } : { error: `${r.field}: ${r.error}`, reason: r.reason };
  },
  path(from, to, available) {
    const p = planUpgradePath(from, to, available);
    return p.ok ? { steps: p.steps } : { error: p.error, reason: p.reason };
  },
};

/** Effective values that cannot be built (a free-form value fighting a derived one) fail the render. */
class ValuesFailed extends Error {
  readonly reason = R.RenderFailed;
}

/** A spec.chart.valuesFrom entry that is missing or holds no map: nothing renders. */
class ValuesReferenceFailed extends Error {
  constructor(
    readonly reason: GitLabCoreReasonType,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The layers of effective values (values/), for the chart version about to be rendered, with
 * spec.chart.valuesFrom read through `lookup` (none given: no object can be found).
 */
export function defaultValues(
  gl: GitLabCore,
  chartVersion: string,
  config: GitLabTargetConfig,
  lookup: ValuesSourceLookup = () => undefined,
): unknown {
  const refs = readValuesFrom(gl.spec, lookup);
  if (!refs.ok) throw new ValuesReferenceFailed(refs.reason, refs.message);
  const r = effectiveValues({
    name: gl.metadata.name!,
    namespace: gl.metadata.namespace!,
    spec: gl.spec,
    chartVersion,
    managerServiceAccount: config.serviceAccountName,
    valuesFrom: refs.layers,
  });
  if (!r.ok) throw new ValuesFailed(r.errors.map((e) => `${e.field}: ${e.message}`).join("; "));
  return r.values;
}

/**
 * A version no source has (not in the charts directory, and no repository to pull it from) is an
 * unresolved version, as the status table says; ChartPullFailed is for a pull that was tried.
 */
class VersionInNoSource extends Error {
  readonly reason = R.VersionUnresolved;
}

/**
 * How long the cluster's capabilities are reused before discovery is asked again. A quiet pass then
 * makes no discovery request; a group-version installed since (the Gateway API, say) is seen within
 * this long.
 */
export const CAPABILITIES_TTL_MS = 5 * 60_000;

/** The last answer of `load` for {@link CAPABILITIES_TTL_MS}; a failed load is not kept. */
export class CapabilitiesCache {
  private last?: { at: number; value: Promise<Capabilities> };

  constructor(
    private readonly load: () => Promise<Capabilities>,
    private readonly ttlMs = CAPABILITIES_TTL_MS,
    private readonly now = () => performance.now(),
  ) {}

  get(): Promise<Capabilities> {
    const t = this.now();
    if (this.last && t - this.last.at < this.ttlMs) return this.last.value;
    const value = this.load();
    const entry = { at: t, value };
    this.last = entry;
    value.catch(() => {
      if (this.last === entry) this.last = undefined;
    });
    return value;
  }
}

/**
 * Charts from HELM_CHARTS or the dynamic pull settings of the environment, rendered by the helm of
 * HELM_BINARY behind a render cache: a pass with the same chart, values and capabilities runs no helm.
 */
export function releaseSourceFromEnv(manager: Manager, env: NodeJS.ProcessEnv = process.env): ReleaseSource {
  const helm = new HelmRunner({ binary: env["HELM_BINARY"]?.trim() || undefined });
  const source = new ChartSource(helm, chartSourceConfigFromEnv(env));
  const cache = new RenderCache();
  const capabilities = new CapabilitiesCache(() => capabilitiesFromDiscovery(manager.client));
  return {
    capabilities: () => capabilities.get(),
    versions: () => source.listChartVersions(),
    async render(req, signal) {
      let chart: Awaited<ReturnType<ChartSource["resolve"]>>;
      try {
        chart = await source.resolve(req.version);
      } catch (e) {
        if (e instanceof ChartNotFoundError) throw new VersionInNoSource(`spec.version: ${e.message}`);
        throw e;
      }
      const result = await renderChartCached(helm, cache, {
        chartDir: chart.path,
        releaseName: req.releaseName,
        namespace: req.namespace,
        values: req.values,
        capabilities: req.capabilities,
        signal,
      });
      renders.inc({ cached: String(result.cached) });
      return result;
    },
  };
}
