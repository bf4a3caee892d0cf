import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HelmRunner } from "../render/helm.js";
import { type ChartSourceConfig, checkChartSourceConfig } from "./config.js";
import { CHART_NAME, findBundledChart, listBundledVersions } from "./directory.js";
import { ChartNotFoundError, ChartPullError, ChartSourceConfigError } from "./errors.js";
import { ChartRepository } from "./repository.js";
import { isChartVersion } from "./semver.js";

export interface ResolvedChart {
  /** A chart folder or a verified archive, for renderChart's chartDir. */
  path: string;
  version: string;
  origin: "directory" | "repository";
}

export interface ChartSourceOptions {
  now?: () => number;
  /** How long a failed pull is answered from memory (GitLab's 10 minutes unless given). */
  retryMs?: number;
}

/**
 * Where the GitLab chart of a version comes from: the bundled charts directory first, then, when
 * dynamic pull is on, the repository (verified against the keyring before use). Versions for the
 * resolver come from the repository's index when dynamic pull is on, else from the directory.
 */
export class ChartSource {
  readonly repository?: ChartRepository;

  constructor(
    helm: HelmRunner,
    readonly config: ChartSourceConfig,
    opts: ChartSourceOptions = {},
  ) {
    checkChartSourceConfig(config);
    if (config.dynamicPull && config.repository) {
      let ca: string | undefined;
      if (config.caFile) {
        try {
          ca = readFileSync(config.caFile, "utf8");
        } catch (e) {
          throw new ChartSourceConfigError(
            "DYNAMIC_CHART_CA_FILE",
            `cannot be read: ${(e as NodeJS.ErrnoException).code ?? e}`,
          );
        }
      }
      this.repository = new ChartRepository(helm, {
        url: config.repository,
        allowHttp: config.allowHttp,
        cacheDir: config.cacheDir ?? join(tmpdir(), "platform-operator-charts"),
        indexTtlMs: config.indexTtlMs,
        keyring: config.keyring,
        ca,
        now: opts.now,
        retryMs: opts.retryMs,
      });
    }
  }

  /**
   * The chart versions the resolver chooses from: the repository index (cached for the TTL) when
   * dynamic pull is on and a repository is set, else the bundled charts.
   */
  async listChartVersions(): Promise<string[]> {
    if (this.repository) return this.repository.versions(CHART_NAME);
    if (this.config.dynamicPull && !this.config.chartsDir)
      throw new ChartPullError("ENABLE_DYNAMIC_CHART_PULL is on but DYNAMIC_CHART_REPOSITORY is not set");
    return this.config.chartsDir ? listBundledVersions(this.config.chartsDir) : [];
  }

  /** The chart for `version`: bundled if present, else pulled and verified, else ChartNotFoundError. */
  async resolve(version: string): Promise<ResolvedChart> {
    const v = version.trim().replace(/^v/, "");
    if (!isChartVersion(v)) throw new ChartNotFoundError(version, `"${version}" is not a chart version`);
    if (this.config.chartsDir) {
      const path = await findBundledChart(this.config.chartsDir, v);
      if (path) return { path, version: v, origin: "directory" };
    }
    if (this.repository) {
      const path = await this.repository.pull(CHART_NAME, v);
      return { path, version: v, origin: "repository" };
    }
    const where = this.config.chartsDir
      ? `the charts directory ${this.config.chartsDir}`
      : "no charts directory (HELM_CHARTS)";
    const pull = this.config.dynamicPull ? "no DYNAMIC_CHART_REPOSITORY is set" : "dynamic pull is off";
    throw new ChartNotFoundError(v, `chart ${CHART_NAME} ${v} is not in ${where}, and ${pull}`);
  }
}
