import { createHash } from "node:crypto";
import { cp, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { parse } from "yaml";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { runCommand } from "./exec.js";
import { ensureHelm, HELM_VERSION } from "./helm.js";
import { repoRoot } from "./paths.js";
import { makeTempDir, removeTempDir } from "./tempdirs.js";

// The fixture GitLab charts (test/fixtures/charts/gitlab, one chart source stamped with each version
// of versions.yaml), as chart folders for tests and as packaged archives for the operator image.

export interface FixtureVersion {
  version: string;
  appVersion: string;
}

export function fixtureChartRoot(): string {
  return join(repoRoot(), "test", "fixtures", "charts", "gitlab");
}

export async function fixtureVersions(): Promise<FixtureVersion[]> {
  const file = join(fixtureChartRoot(), "versions.yaml");
  const doc = parse(await readFile(file, "utf8")) as { versions: FixtureVersion[] };
  return doc.versions.map((v) => ({ version: String(v.version), appVersion: String(v.appVersion) }));
}

/**
 * Writes `<out>/gitlab/<version>/` for each fixture version (or the ones asked for): the shared
 * chart source with that version's Chart.yaml. The folder layout HELM_CHARTS accepts.
 */
export async function writeFixtureCharts(out: string, only?: readonly string[]): Promise<FixtureVersion[]> {
  const all = await fixtureVersions();
  const chosen = only ? all.filter((v) => only.includes(v.version)) : all;
  if (only && chosen.length !== only.length)
    throw new Error(
      `unknown fixture chart versions: ${only.filter((v) => !all.some((a) => a.version === v)).join(", ")}`,
    );
  for (const { version, appVersion } of chosen) {
    const dir = join(out, "gitlab", version);
    await mkdir(dir, { recursive: true });
    await cp(join(fixtureChartRoot(), "chart"), dir, { recursive: true });
    await writeFile(
      join(dir, "Chart.yaml"),
      [
        "apiVersion: v2",
        "name: gitlab",
        "description: Fixture with the shapes of the GitLab chart, for the operator's tests.",
        "type: application",
        `version: ${version}`,
        `appVersion: ${appVersion}`,
        "",
      ].join("\n"),
    );
  }
  return chosen;
}

/** A digest of the fixture's sources (every file, by path and content) and of the helm that packs them. */
async function fixtureDigest(): Promise<string> {
  const root = fixtureChartRoot();
  const hash = createHash("sha256").update(HELM_VERSION);
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) hash.update(`\0${relative(root, path)}\0`).update(await readFile(path));
    }
  };
  await walk(root);
  return hash.digest("hex").slice(0, 12);
}

/**
 * Every fixture version packaged by `helm package` as `gitlab-<version>.tgz` (the archive layout of
 * HELM_CHARTS), in a cache folder keyed by the fixture's content. `helm package` stamps the time into
 * each archive, so packaging again would change the bytes; the cache keeps the operator image's chart
 * layer, and so the image, the same until the fixture itself changes.
 */
export async function ensurePackagedFixtureCharts(
  onProgress: (line: string) => void = () => {},
): Promise<string> {
  const target = join(cacheRoot(), `gitlab-fixture-charts-${await fixtureDigest()}`);
  if (await exists(target)) return target;
  const helm = await ensureHelm(onProgress);
  onProgress("packaging the fixture GitLab charts for the operator image");
  await populateAtomically(target, async (scratch) => {
    const sources = makeTempDir("gitlab-fixture-src");
    try {
      const versions = await writeFixtureCharts(sources);
      const home = join(sources, ".helm-home");
      const env = {
        PATH: process.env["PATH"],
        HOME: home,
        HELM_CONFIG_HOME: join(home, "config"),
        HELM_CACHE_HOME: join(home, "cache"),
        HELM_DATA_HOME: join(home, "data"),
      };
      for (const { version } of versions) {
        await runCommand(helm, ["package", join(sources, "gitlab", version), "--destination", scratch], {
          env,
        });
      }
    } finally {
      removeTempDir(sources);
    }
  });
  return target;
}
