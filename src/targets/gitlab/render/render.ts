import { type RenderCache, type RenderKeyInput, renderKey } from "./cache.js";
import { chartInfo } from "./chart-info.js";
import { RenderError } from "./errors.js";
import { HelmError, type HelmRunner } from "./helm.js";
import { splitManifests } from "./manifests.js";
import { redactValues } from "./redact.js";
import type { Capabilities, RenderRequest, RenderResult } from "./types.js";

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const KUBE_VERSION = /^v?\d+\.\d+(\.\d+)?([-+][0-9A-Za-z.+-]*)?$/;
// Group-versions and kinds only: these go on helm's command line.
const API_VERSION = /^[A-Za-z0-9][A-Za-z0-9.-]*(\/[A-Za-z0-9.-]+){0,2}$/;

function checkRequest(req: RenderRequest): void {
  if (!NAME.test(req.releaseName) || req.releaseName.length > 53)
    throw new RenderError(
      `releaseName: "${req.releaseName}" is not a valid release name (lower-case DNS label of at most 53 characters)`,
    );
  if (!NAME.test(req.namespace) || req.namespace.length > 63)
    throw new RenderError(`namespace: "${req.namespace}" is not a valid namespace name`);
  checkCapabilities(req.capabilities);
  if (
    req.values !== undefined &&
    req.values !== null &&
    (typeof req.values !== "object" || Array.isArray(req.values))
  )
    throw new RenderError("values: must be a map");
}

function checkCapabilities(caps: Capabilities): void {
  if (!KUBE_VERSION.test(caps.kubeVersion))
    throw new RenderError(`capabilities.kubeVersion: "${caps.kubeVersion}" is not a Kubernetes version`);
  for (const v of caps.apiVersions) {
    if (!API_VERSION.test(v))
      throw new RenderError(`capabilities.apiVersions: "${v}" is not a group-version or kind`);
  }
}

/**
 * The values paths a schema violation names, in helm's order. Helm 3.18+ (jsonschema v6) writes
 * `- at '/a/b': ...`; older releases wrote `- a.b: ...`.
 */
export function schemaFields(message: string): string[] {
  if (!/values don't meet the specifications of the schema/.test(message)) return [];
  const v6 = [...message.matchAll(/^- at '([^']*)'/gm)].map((m) => {
    const path = m[1]!.replace(/^\//, "").split("/").filter(Boolean).join(".");
    return path === "" ? "(root)" : path;
  });
  if (v6.length > 0) return [...new Set(v6)];
  return [...new Set([...message.matchAll(/^- ([^:\s]+):/gm)].map((m) => m[1]!))];
}

/** The first values path a schema violation names. */
export function schemaField(message: string): string | undefined {
  return schemaFields(message)[0];
}

/** helm's message without its usage noise, redacted, bounded. */
function helmMessage(e: HelmError, values: unknown): string {
  const lines = e.detail
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l !== "" && !/^(walk\.go|WARNING|install\.go|Use --debug flag)/.test(l));
  const kept = lines.length > 0 ? lines : e.detail.split("\n").filter((l) => l.trim() !== "");
  const text = kept
    .join("\n")
    .replace(/^Error: /m, "")
    .slice(-4000);
  return redactValues(text ? `${e.message}: ${text}` : e.message, values);
}

/**
 * Renders a chart with the real helm, as `helm install` would for this release on this cluster:
 * release name and namespace, capabilities from discovery, values through stdin, CRDs included so
 * the caller sees (and refuses) them, chart tests left out. The chart's values.schema.json is
 * enforced by helm itself; a violation is a {@link RenderError} naming the field.
 */
export async function renderChart(helm: HelmRunner, req: RenderRequest): Promise<RenderResult> {
  checkRequest(req);
  const values = req.values ?? {};
  let chart: RenderResult["chart"];
  try {
    chart = await chartInfo(helm, req.chartDir);
  } catch (e) {
    if (e instanceof HelmError) throw new RenderError(`chart ${req.chartDir}: ${helmMessage(e, values)}`);
    throw e;
  }
  const args = [
    "template",
    req.releaseName,
    req.chartDir,
    "--namespace",
    req.namespace,
    "--kube-version",
    req.capabilities.kubeVersion,
    ...req.capabilities.apiVersions.flatMap((v) => ["--api-versions", v]),
    "--values",
    "-",
    "--include-crds",
    "--skip-tests",
  ];
  let stdout: string;
  try {
    ({ stdout } = await helm.run(args, { stdin: JSON.stringify(values), signal: req.signal }));
  } catch (e) {
    if (!(e instanceof HelmError)) throw e;
    const message = helmMessage(e, values);
    const fields = schemaFields(message);
    const what = `${chart.name} ${chart.version}`;
    throw new RenderError(
      fields.length > 0
        ? `chart ${what}: values violate the chart's schema at ${fields.join(", ")}: ${message}`
        : `chart ${what}: ${message}`,
      fields[0],
      fields,
    );
  }
  try {
    const split = splitManifests(stdout, {
      releaseName: req.releaseName,
      namespace: req.namespace,
      clusterScoped: req.capabilities.clusterScoped,
    });
    return { ...split, chart };
  } catch (e) {
    if (e instanceof RenderError)
      throw new RenderError(`chart ${chart.name} ${chart.version}: ${redactValues(e.message, values)}`);
    throw e;
  }
}

/**
 * renderChart behind a {@link RenderCache}: a pass whose chart, release, values and capabilities
 * are unchanged gets the previous result without running helm. `cached` says which it was.
 */
export async function renderChartCached(
  helm: HelmRunner,
  cache: RenderCache,
  req: RenderRequest,
): Promise<RenderResult & { cached: boolean; key: string }> {
  checkRequest(req);
  const { digest } = await chartInfo(helm, req.chartDir).catch((e: unknown) => {
    if (e instanceof HelmError) throw new RenderError(`chart ${req.chartDir}: ${helmMessage(e, req.values)}`);
    throw e;
  });
  const input: RenderKeyInput = {
    chartDigest: digest,
    releaseName: req.releaseName,
    namespace: req.namespace,
    values: req.values,
    capabilities: req.capabilities,
  };
  const key = renderKey(input);
  const hit = cache.get(key);
  if (hit) return { ...hit, cached: true, key };
  const result = await renderChart(helm, req);
  cache.set(key, result);
  return { ...result, cached: false, key };
}
