/** Renders the GitLab chart with real helm for one GitLabCore; see render.ts. */
export { RenderCache, type RenderKeyInput, renderKey } from "./cache.js";
export { capabilitiesFromDiscovery } from "./capabilities.js";
export { chartDigest, chartInfo } from "./chart-info.js";
export { RenderError } from "./errors.js";
export { HelmError, type HelmOutput, HelmRunner, type HelmRunnerOptions } from "./helm.js";
export {
  HOOK_ANNOTATION,
  HOOK_DELETE_POLICY_ANNOTATION,
  HOOK_WEIGHT_ANNOTATION,
  splitManifests,
} from "./manifests.js";
export { redactValues } from "./redact.js";
export { renderChart, renderChartCached, schemaField, schemaFields } from "./render.js";
export type {
  Capabilities,
  ChartInfo,
  RenderedHook,
  RenderedObject,
  RenderRequest,
  RenderResult,
} from "./types.js";
