import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { makeTempDir, removeTempDir } from "./tempdirs.js";

// The fixture GitLab chart (test/fixtures/charts/gitlab): not GitLab, but the real chart's shapes
// where the operator meets them (hooks, values, kinds). The tests render it, and npm start runs the
// gitlab target on it.

const FIXTURE = fileURLToPath(new URL("../../../test/fixtures/charts/gitlab", import.meta.url));

/** The fixture's own list of versions and the GitLab versions they deploy. */
export function fixtureVersions(): { version: string; appVersion: string }[] {
  const doc = parse(readFileSync(join(FIXTURE, "versions.yaml"), "utf8")) as {
    versions: { version: string; appVersion: string }[];
  };
  return doc.versions.map((v) => ({ version: String(v.version), appVersion: String(v.appVersion) }));
}

/**
 * A charts directory in the bundled layout (`gitlab/<version>/`) holding the fixture chart under
 * each version, with the GitLab version the fixture pairs with it as appVersion.
 */
export function fixtureChartsDir(versions: { version: string; appVersion: string }[] = fixtureVersions()): {
  dir: string;
  remove(): void;
} {
  const dir = makeTempDir("gitlab-charts");
  for (const v of versions) {
    const to = join(dir, "gitlab", v.version);
    cpSync(join(FIXTURE, "chart"), to, { recursive: true });
    const chartYaml = readFileSync(join(to, "Chart.yaml"), "utf8")
      .replace(/^version: .*$/m, `version: ${v.version}`)
      .replace(/^appVersion: .*$/m, `appVersion: ${v.appVersion}`);
    writeFileSync(join(to, "Chart.yaml"), chartYaml);
  }
  return { dir, remove: () => removeTempDir(dir) };
}
