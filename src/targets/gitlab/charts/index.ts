/** Where GitLab charts come from: a charts directory, or a verified pull from a repository. */
export {
  type ChartSourceConfig,
  chartSourceConfigFromEnv,
  checkChartSourceConfig,
  DEFAULT_INDEX_TTL_MS,
  parseDuration,
} from "./config.js";
export { CHART_NAME, findBundledChart, listBundledVersions } from "./directory.js";
export { ChartNotFoundError, ChartPullError, ChartSourceConfigError } from "./errors.js";
export { crc24, dearmor, type LoadedKeyring, loadKeyring } from "./keyring.js";
export { ChartRepository, type IndexEntry, PULL_RETRY_MS, parseIndex } from "./repository.js";
export { compareVersions, isChartVersion, parseVersion, sortVersions } from "./semver.js";
export { ChartSource, type ResolvedChart } from "./source.js";
