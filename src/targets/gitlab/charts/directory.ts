import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isChartVersion, sortVersions } from "./semver.js";

export const CHART_NAME = "gitlab";

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false;
}
async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() ?? false;
}

/**
 * The bundled chart of `version` in a charts directory: `<dir>/gitlab-<version>.tgz` (what
 * `helm package` writes), else the folder `<dir>/gitlab/<version>/`. Undefined when absent.
 */
export async function findBundledChart(dir: string, version: string): Promise<string | undefined> {
  const v = version.replace(/^v/, "");
  if (!isChartVersion(v)) return undefined;
  const archive = join(dir, `${CHART_NAME}-${v}.tgz`);
  if (await isFile(archive)) return archive;
  const folder = join(dir, CHART_NAME, v);
  if (await isFile(join(folder, "Chart.yaml"))) return folder;
  return undefined;
}

/** Every version the charts directory holds, in either layout, sorted. A missing dir holds none. */
export async function listBundledVersions(dir: string): Promise<string[]> {
  const found: string[] = [];
  const top = await readdir(dir).catch(() => [] as string[]);
  const archive = new RegExp(`^${CHART_NAME}-(.+)\\.tgz$`);
  for (const name of top) {
    const v = archive.exec(name)?.[1];
    if (v && isChartVersion(v) && (await isFile(join(dir, name)))) found.push(v);
  }
  if (await isDir(join(dir, CHART_NAME))) {
    for (const v of await readdir(join(dir, CHART_NAME))) {
      if (isChartVersion(v) && (await isFile(join(dir, CHART_NAME, v, "Chart.yaml")))) found.push(v);
    }
  }
  return sortVersions(found);
}
