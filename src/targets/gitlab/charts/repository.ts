import { createHash, randomBytes } from "node:crypto";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { HelmError, type HelmRunner } from "../render/helm.js";
import { ChartPullError } from "./errors.js";
import { displayUrl, fetchBytes } from "./fetch.js";
import { type LoadedKeyring, loadKeyring } from "./keyring.js";
import { isChartVersion, sortVersions } from "./semver.js";

export interface IndexEntry {
  version: string;
  appVersion?: string;
  urls: string[];
  digest?: string;
}

export interface RepositoryOptions {
  /** The repository URL; index.yaml and relative chart URLs resolve against it. */
  url: string;
  allowHttp: boolean;
  cacheDir: string;
  indexTtlMs: number;
  /**
   * Public keyring the `.prov` must be signed by (binary, or ASCII-armored keys); read again for
   * every pull. Without it nothing can be pulled.
   */
  keyring?: string;
  /** Extra CA (PEM) for the repository's TLS. */
  ca?: string;
  /** How long a failed pull (or index fetch) is answered from memory before it is tried again. */
  retryMs?: number;
  now?: () => number;
}

/** GitLab's spec: a chart that failed is pulled again every 10 minutes, whatever asks for it. */
export const PULL_RETRY_MS = 10 * 60_000;

// A public repository's index lists every chart it serves, every version: tens of MiB at most.
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
const MAX_CHART_BYTES = 64 * 1024 * 1024;
const MAX_PROV_BYTES = 1024 * 1024;
const SHA256 = /^[0-9a-f]{64}$/;

/** The entries of one chart in an index.yaml; malformed entries are skipped, not fatal. */
export function parseIndex(text: string, chart: string, where: string): IndexEntry[] {
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new ChartPullError(`${where}: index.yaml is not valid YAML (${(e as Error).name})`);
  }
  const entries = (doc as { entries?: Record<string, unknown> } | null)?.entries;
  if (!entries || typeof entries !== "object")
    throw new ChartPullError(`${where}: index.yaml has no entries`);
  const list = entries[chart];
  if (!Array.isArray(list)) return [];
  const out: IndexEntry[] = [];
  for (const raw of list) {
    if (!raw || typeof raw !== "object") continue;
    const e = raw as Record<string, unknown>;
    const version = typeof e["version"] === "string" ? e["version"].replace(/^v/, "") : undefined;
    if (!version || !isChartVersion(version)) continue;
    const urls = Array.isArray(e["urls"]) ? e["urls"].filter((u): u is string => typeof u === "string") : [];
    if (urls.length === 0) continue;
    const entry: IndexEntry = { version, urls };
    if (typeof e["appVersion"] === "string") entry.appVersion = e["appVersion"];
    if (typeof e["digest"] === "string" && SHA256.test(e["digest"])) entry.digest = e["digest"];
    out.push(entry);
  }
  return out;
}

/**
 * One chart repository: its index (fetched at most once per TTL, shared by concurrent callers) and
 * verified pulls. A pulled archive is kept in the cache only after `helm verify` accepted its `.prov`
 * against the keyring and the index's digest matched; a chart from the cache is verified again
 * once per process and keyring content, so a file swapped on disk is caught too, and a key removed
 * from the keyring applies to the charts already cached. A pull that failed is not tried again for
 * {@link PULL_RETRY_MS} (every resource asking for it gets the same error meanwhile) unless the
 * keyring changed; so is an index that could not be fetched.
 */
export class ChartRepository {
  private readonly base: URL;
  private readonly now: () => number;
  private index?: { fetchedAt: number; text: string };
  private fetching?: Promise<string>;
  private parsed?: { text: string; byChart: Map<string, IndexEntry[]> };
  private readonly verified = new Set<string>();
  private readonly pulling = new Map<string, Promise<string>>();
  private readonly failed = new Map<string, { at: number; keyring?: string; error: ChartPullError }>();
  private indexFailed?: { at: number; error: ChartPullError };

  constructor(
    private readonly helm: HelmRunner,
    private readonly opts: RepositoryOptions,
  ) {
    this.base = new URL(opts.url.endsWith("/") ? opts.url : `${opts.url}/`);
    this.now = opts.now ?? Date.now;
  }

  private get retryMs(): number {
    return this.opts.retryMs ?? PULL_RETRY_MS;
  }

  get url(): string {
    return displayUrl(this.base);
  }

  private fetchOptions(maxBytes: number) {
    return { allowHttp: this.opts.allowHttp, ca: this.opts.ca, maxBytes };
  }

  /** The raw index, from memory while younger than the TTL. */
  private async indexText(): Promise<string> {
    if (this.index && this.now() - this.index.fetchedAt < this.opts.indexTtlMs) return this.index.text;
    const failed = this.indexFailed;
    if (failed && this.now() - failed.at < this.retryMs) throw failed.error;
    this.fetching ??= (async () => {
      try {
        const bytes = await fetchBytes(new URL("index.yaml", this.base), this.fetchOptions(MAX_INDEX_BYTES));
        if (!bytes) throw new ChartPullError(`${this.url}: the repository has no index.yaml`);
        const text = bytes.toString("utf8");
        this.index = { fetchedAt: this.now(), text };
        this.indexFailed = undefined;
        return text;
      } catch (e) {
        if (e instanceof ChartPullError) this.indexFailed = { at: this.now(), error: e };
        throw e;
      } finally {
        this.fetching = undefined;
      }
    })();
    return this.fetching;
  }

  /** How often the index was actually fetched is visible to tests through this. */
  get indexFetchedAt(): number | undefined {
    return this.index?.fetchedAt;
  }

  /** The chart's entries; parsed once per fetched index (a large index costs a second to parse). */
  async entries(chart: string): Promise<IndexEntry[]> {
    const text = await this.indexText();
    if (this.parsed?.text !== text) this.parsed = { text, byChart: new Map() };
    let entries = this.parsed.byChart.get(chart);
    if (!entries) {
      entries = parseIndex(text, chart, this.url);
      this.parsed.byChart.set(chart, entries);
    }
    return entries;
  }

  /** Versions of `chart` the repository offers, sorted. */
  async versions(chart: string): Promise<string[]> {
    return sortVersions((await this.entries(chart)).map((e) => e.version));
  }

  /**
   * The path of a verified archive of `chart` `version` in the cache, pulling it when missing.
   * Throws {@link ChartPullError} for anything that is not a verified chart: no keyring, version not
   * offered, download failure, digest mismatch, missing `.prov`, signature refused.
   */
  pull(chart: string, version: string): Promise<string> {
    const v = version.replace(/^v/, "");
    const key = `${chart}-${v}`;
    let pending = this.pulling.get(key);
    if (!pending) {
      pending = this.pullOrRecall(chart, v, key).finally(() => this.pulling.delete(key));
      this.pulling.set(key, pending);
    }
    return pending;
  }

  /** A pull, unless the same one failed less than retryMs ago against the same keyring. */
  private async pullOrRecall(chart: string, version: string, key: string): Promise<string> {
    if (!this.opts.keyring)
      throw new ChartPullError(
        `${chart} ${version}: DYNAMIC_CHART_KEYRING is not set, and a pulled chart is never used unverified`,
      );
    // Keys that do not load fail at once, and are read again next time: no memory of them.
    const ring = await loadKeyring(this.opts.keyring, join(this.opts.cacheDir, "keyrings"));
    const failed = this.failed.get(key);
    if (failed && failed.keyring === ring.digest && this.now() - failed.at < this.retryMs) throw failed.error;
    try {
      const file = await this.pullOnce(chart, version, ring);
      this.failed.delete(key);
      return file;
    } catch (e) {
      if (e instanceof ChartPullError)
        this.failed.set(key, { at: this.now(), keyring: ring.digest, error: e });
      throw e;
    }
  }

  private async pullOnce(chart: string, version: string, ring: LoadedKeyring): Promise<string> {
    if (!isChartVersion(version)) throw new ChartPullError(`${chart} ${version}: not a chart version`);
    const dir = join(this.opts.cacheDir, "charts");
    const file = join(dir, `${chart}-${version}.tgz`);
    // Verified once per keyring content: a key removed since applies to a chart already cached.
    const verifiedKey = `${ring.digest} ${file}`;
    if (await exists(file)) {
      if (this.verified.has(verifiedKey)) return file;
      try {
        await this.verify(file, `${chart} ${version} (cached)`, ring);
        this.verified.add(verifiedKey);
        return file;
      } catch {
        // A cached file that no longer verifies is dropped and pulled again.
        await rm(file, { force: true });
        await rm(`${file}.prov`, { force: true });
      }
    }
    const entry = (await this.entries(chart)).find((e) => e.version === version);
    if (!entry) throw new ChartPullError(`${chart} ${version}: not in the index of ${this.url}`);
    const chartUrl = new URL(entry.urls[0]!, this.base);
    const archive = await fetchBytes(chartUrl, this.fetchOptions(MAX_CHART_BYTES));
    if (!archive)
      throw new ChartPullError(`${chart} ${version}: ${displayUrl(chartUrl)} is missing (HTTP 404)`);
    if (entry.digest) {
      const actual = createHash("sha256").update(archive).digest("hex");
      if (actual !== entry.digest)
        throw new ChartPullError(
          `${chart} ${version}: the archive's sha256 ${actual} is not the index's digest ${entry.digest}`,
        );
    }
    const provUrl = new URL(`${chartUrl.pathname}.prov`, chartUrl);
    const prov = await fetchBytes(provUrl, this.fetchOptions(MAX_PROV_BYTES));
    if (!prov)
      throw new ChartPullError(
        `${chart} ${version}: no provenance file at ${displayUrl(provUrl)}; an unsigned chart is never used`,
      );
    // Verified in a scratch folder and moved into place whole: the cache never holds an unverified chart.
    const scratch = join(dir, `.pull-${process.pid}-${randomBytes(4).toString("hex")}`);
    await mkdir(scratch, { recursive: true, mode: 0o700 });
    try {
      const tmp = join(scratch, `${chart}-${version}.tgz`);
      await writeFile(tmp, archive);
      await writeFile(`${tmp}.prov`, prov);
      await this.verify(tmp, `${chart} ${version}`, ring);
      await rename(`${tmp}.prov`, `${file}.prov`);
      await rename(tmp, file);
      this.verified.add(verifiedKey);
      return file;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  private async verify(archive: string, what: string, ring: LoadedKeyring): Promise<void> {
    try {
      await this.helm.run(["verify", "--keyring", ring.file, archive]);
    } catch (e) {
      if (!(e instanceof HelmError)) throw e;
      const reason = e.detail
        .split("\n")
        .map((l) => l.replace(/^Error: /, "").trim())
        .filter(Boolean)
        .slice(-3)
        .join("; ");
      throw new ChartPullError(`${what}: signature verification failed: ${reason || e.message}`);
    }
  }
}

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}
