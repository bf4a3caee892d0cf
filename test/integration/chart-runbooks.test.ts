import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";

// The runbook links as the real helm renders them: paths by default, absolute under
// monitoring.runbookBaseURL, and a base that is not an address refused by the values schema.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const MONITORING = [
  "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
  "--set=targets.openbao.enabled=true",
  "--set=targets.openbao.namespaces={bao}",
];

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary objects
type Obj = Record<string, any>;
let helm: string;

async function runbookUrls(args: string[]): Promise<Map<string, string>> {
  const out = await runCommand(helm, ["template", "po", CHART, "--namespace", "ops", ...MONITORING, ...args]);
  const urls = new Map<string, string>();
  for (const doc of parseAllDocuments(out.stdout)) {
    const o = doc.toJS() as Obj | null;
    if (o?.kind !== "PrometheusRule") continue;
    for (const g of o.spec.groups)
      for (const r of g.rules) urls.set(`${o.metadata.name}/${r.alert}`, r.annotations.runbook_url);
  }
  return urls;
}

describe("chart: alert runbook links", () => {
  before(async () => {
    helm = await ensureHelm();
  });

  it("renders each alert's runbook path as written by default", async () => {
    const urls = await runbookUrls([]);
    assert.ok(urls.size >= 7, `found ${urls.size} alerts`);
    assert.equal(urls.get("po-openbao/OpenBaoBackupsFailing"), "docs/runbooks/openbao.md#backup-failing");
    for (const [alert, url] of urls) assert.match(url, /^docs\/runbooks\/[a-z-]+\.md#/, alert);
  });

  it("makes every link absolute under monitoring.runbookBaseURL, with or without a trailing slash", async () => {
    for (const base of [
      "https://docs.example.internal/platform-operator",
      "https://docs.example.internal/platform-operator/",
    ]) {
      const urls = await runbookUrls([`--set=monitoring.runbookBaseURL=${base}`]);
      assert.equal(
        urls.get("po-openbao/OpenBaoUpgradeStuck"),
        "https://docs.example.internal/platform-operator/docs/runbooks/openbao.md#failed-rolling-upgrade",
      );
      for (const [alert, url] of urls)
        assert.ok(
          url.startsWith("https://docs.example.internal/platform-operator/docs/runbooks/"),
          `${alert}: ${url}`,
        );
    }
  });

  it("refuses a base that is not an http(s) address", async () => {
    await assert.rejects(
      runCommand(helm, [
        "template",
        "po",
        CHART,
        "--namespace",
        "ops",
        ...MONITORING,
        "--set=monitoring.runbookBaseURL=docs.example.internal",
      ]),
      /runbookBaseURL/,
    );
  });
});
