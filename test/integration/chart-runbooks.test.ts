import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { shellBlocks } from "../support/runbook.js";

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

  it("operator.md names the Deployments and Leases the chart makes with the install docs' release and namespace", async () => {
    // As docs/install.md installs it: release platform-operator in platform-operator-system.
    const out = await runCommand(helm, [
      "template",
      "platform-operator",
      CHART,
      "--namespace",
      "platform-operator-system",
      "--set=targets.openbao.enabled=true",
      "--set=targets.gitlab.enabled=true",
      "--set=targets.vault.namespaces={team-a}",
      "--set=targets.openbao.namespaces={bao}",
      "--set=targets.gitlab.namespaces={gitlab}",
    ]);
    const objs = parseAllDocuments(out.stdout)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o);
    const deployments = new Set(objs.filter((o) => o.kind === "Deployment").map((o) => o.metadata.name));
    // The Lease each target's manager takes: <leaderElection.leaseName>-<target> (runtime/manager).
    const leases = new Set<string>();
    for (const cm of objs.filter((o) => o.kind === "ConfigMap" && o.data?.["config.yaml"])) {
      const config = parseAllDocuments(cm.data["config.yaml"])[0]!.toJS() as Obj;
      for (const target of Object.keys(config.targets ?? {}))
        leases.add(`${config.leaderElection.leaseName}-${target}`);
    }
    const text = ["", "Controller down", "Reconcile stale"]
      .flatMap((heading) => shellBlocks("operator.md", heading))
      .join("\n");
    const deploy = [...text.matchAll(/deploy\/(\S+)/g)].map((m) => m[1]!);
    const lease = [...text.matchAll(/get lease -n \S+ (\S+)/g)].map((m) => m[1]!);
    assert.ok(deploy.length > 0, "the runbook names a Deployment");
    for (const target of ["vault", "openbao", "gitlab"])
      for (const d of deploy) {
        const name = d.replaceAll("$TARGET", target);
        assert.ok(deployments.has(name), `deploy/${name} is none of ${[...deployments].join(", ")}`);
      }
    assert.ok(lease.length > 0, "the runbook names the leader's Lease");
    for (const target of ["vault", "openbao", "gitlab"])
      for (const l of lease) {
        const name = l.replaceAll("$TARGET", target);
        assert.ok(leases.has(name), `Lease ${name} is none of ${[...leases].join(", ")}`);
      }
    // The target runbooks read their target's process by its name, no $TARGET there.
    const named = ["vaultseed.md", "openbao.md", "gitlabcore.md"].flatMap((file) =>
      [
        ...shellBlocks(file, "")
          .join("\n")
          .matchAll(/-n platform-operator-system deploy\/(\S+)/g),
      ].map((m) => [file, m[1]!] as const),
    );
    assert.ok(named.length > 0, "a target runbook reads the operator's log");
    for (const [file, name] of named)
      assert.ok(deployments.has(name), `${file}: deploy/${name} is none of ${[...deployments].join(", ")}`);
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
