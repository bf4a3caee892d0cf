import { ChartSourceConfigError } from "./errors.js";

export interface ChartSourceConfig {
  /** HELM_CHARTS: the bundled charts; unset means none. */
  chartsDir?: string;
  /** ENABLE_DYNAMIC_CHART_PULL (default true). */
  dynamicPull: boolean;
  /** DYNAMIC_CHART_REPOSITORY: a chart repository (its index.yaml is `<url>/index.yaml`). */
  repository?: string;
  /** DYNAMIC_CHART_ALLOW_HTTP (default false): accept an http:// repository. */
  allowHttp: boolean;
  /** DYNAMIC_CHART_CACHE_DIRECTORY: pulled charts and the index; default a folder under the OS temp dir. */
  cacheDir?: string;
  /** DYNAMIC_CHART_CACHE_TTL (default 30m): how long a fetched index is used. */
  indexTtlMs: number;
  /** DYNAMIC_CHART_KEYRING: public keyring a pulled chart's `.prov` must be signed by. */
  keyring?: string;
  /** DYNAMIC_CHART_CA_FILE: extra CA bundle for the repository's TLS (ours; upstream has none). */
  caFile?: string;
}

export const DEFAULT_INDEX_TTL_MS = 30 * 60_000;

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ChartSourceConfigError(name, `must be true or false, got "${raw}"`);
}

/** Go-style durations as the upstream settings take them: "30m", "1h30m", "90s". */
export function parseDuration(raw: string, name: string): number {
  let rest = raw.trim();
  let total = 0;
  if (rest === "") throw new ChartSourceConfigError(name, "is empty");
  while (rest !== "") {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m)
      throw new ChartSourceConfigError(name, `must be a duration such as "30m" or "1h30m", got "${raw}"`);
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Reads and checks the reconciler's chart settings; a bad one names its variable. */
export function chartSourceConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ChartSourceConfig {
  const str = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const config: ChartSourceConfig = {
    dynamicPull: bool(env, "ENABLE_DYNAMIC_CHART_PULL", true),
    allowHttp: bool(env, "DYNAMIC_CHART_ALLOW_HTTP", false),
    indexTtlMs: str("DYNAMIC_CHART_CACHE_TTL")
      ? parseDuration(str("DYNAMIC_CHART_CACHE_TTL")!, "DYNAMIC_CHART_CACHE_TTL")
      : DEFAULT_INDEX_TTL_MS,
  };
  const chartsDir = str("HELM_CHARTS");
  if (chartsDir) config.chartsDir = chartsDir;
  const repository = str("DYNAMIC_CHART_REPOSITORY");
  if (repository) config.repository = repository;
  const cacheDir = str("DYNAMIC_CHART_CACHE_DIRECTORY");
  if (cacheDir) config.cacheDir = cacheDir;
  const keyring = str("DYNAMIC_CHART_KEYRING");
  if (keyring) config.keyring = keyring;
  const caFile = str("DYNAMIC_CHART_CA_FILE");
  if (caFile) config.caFile = caFile;
  checkChartSourceConfig(config);
  return config;
}

/** The rules, for configs built in code too: an http repository needs allowHttp. */
export function checkChartSourceConfig(config: ChartSourceConfig): void {
  if (config.repository !== undefined) {
    let url: URL;
    try {
      url = new URL(config.repository);
    } catch {
      throw new ChartSourceConfigError("DYNAMIC_CHART_REPOSITORY", `"${config.repository}" is not a URL`);
    }
    if (url.username || url.password)
      throw new ChartSourceConfigError("DYNAMIC_CHART_REPOSITORY", "must not carry credentials in the URL");
    if (url.protocol === "http:" && !config.allowHttp)
      throw new ChartSourceConfigError(
        "DYNAMIC_CHART_REPOSITORY",
        "http:// is refused (charts and their signatures would travel unprotected); use https:// or set DYNAMIC_CHART_ALLOW_HTTP=true",
      );
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new ChartSourceConfigError(
        "DYNAMIC_CHART_REPOSITORY",
        `must be an https:// URL, got ${url.protocol}`,
      );
  }
  if (!(Number.isFinite(config.indexTtlMs) && config.indexTtlMs >= 0))
    throw new ChartSourceConfigError("DYNAMIC_CHART_CACHE_TTL", "must be a duration of at least 0");
}
