import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { DASHBOARDS, dashboardText } from "../../src/cli/dashboards.js";
import { type DashboardSpec, layout, queriesOf, stat } from "../../src/runtime/grafana.js";
import { BUILTIN_METRIC, registeredMetrics } from "../support/metrics-registry.js";
import { baseMetric, metricNames, selectorLabels } from "../support/promql.js";

// The dashboards are generated from the panels the code declares, and checked against the metrics
// the code registers: a panel that queries a metric nobody exports, or a metric no panel shows,
// fails here.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const FOLDER = join(ROOT, "deploy/chart/platform-operator/dashboards");
/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = new Set(["job", "pod", "namespace", "instance"]);

type Registered = Awaited<ReturnType<typeof registeredMetrics>>;
let registered: Registered;

/** Which dashboard must show a metric: a target's by its prefix, the runtime's on the operator's. */
function homeOf(metric: string): string {
  if (metric.startsWith("openbao_")) return "openbao.json";
  if (metric.startsWith("gitlabcore_")) return "gitlab.json";
  if (metric.startsWith("ohmlab_")) return "vault.json";
  return "platform-operator.json";
}

/** What is wrong with a dashboard against the registered metrics. */
function problems(spec: DashboardSpec, metrics: Registered): string[] {
  const found: string[] = [];
  for (const { panel, expr } of queriesOf(spec)) {
    for (const name of metricNames(expr)) {
      const base = baseMetric(name);
      if (!BUILTIN_METRIC.test(base) && !metrics.has(base))
        found.push(`${panel}: queries ${name}, which is not exported`);
    }
    for (const { metric, labels } of selectorLabels(expr)) {
      const known = metrics.get(baseMetric(metric));
      if (!known) continue;
      for (const l of labels)
        if (!known.labels.has(l) && !TARGET_LABELS.has(l))
          found.push(`${panel}: ${metric} has no label ${l}`);
    }
  }
  return found;
}

describe("Grafana dashboards", () => {
  before(async () => {
    registered = await registeredMetrics();
  });

  it("are committed as generated (npm run dashboards:write)", () => {
    for (const [file, spec] of Object.entries(DASHBOARDS))
      assert.equal(readFileSync(join(FOLDER, file), "utf8"), dashboardText(spec), `${file} is stale`);
  });

  it("query only metrics the operator exports, with labels those metrics have", () => {
    for (const [file, spec] of Object.entries(DASHBOARDS))
      assert.deepEqual(problems(spec, registered), [], file);
  });

  it("show every metric the operator registers, each on its target's dashboard", () => {
    const shown = new Map<string, Set<string>>();
    for (const [file, spec] of Object.entries(DASHBOARDS))
      shown.set(file, new Set(queriesOf(spec).flatMap((q) => metricNames(q.expr).map(baseMetric))));
    const missing = [...registered.keys()]
      .filter((m) => !BUILTIN_METRIC.test(m))
      .filter((m) => !shown.get(homeOf(m))?.has(m))
      .map((m) => `${m} (on ${homeOf(m)})`);
    assert.deepEqual(missing, []);
  });

  it("would catch a panel querying an unknown metric or label (the checks can fail)", () => {
    const bad: DashboardSpec = {
      uid: "x",
      title: "x",
      description: "x",
      tags: [],
      variables: [],
      rows: [
        {
          title: "r",
          panels: [
            stat("a", "a", "sum(openbao_cluster_sealedd)"),
            stat("b", "b", 'sum(openbao_cluster_sealed{step="x"})'),
          ],
        },
      ],
    };
    assert.deepEqual(problems(bad, registered), [
      "a: queries openbao_cluster_sealedd, which is not exported",
      "b: openbao_cluster_sealed has no label step",
    ]);
  });

  it("place panels on the 24-column grid without overlaps", () => {
    for (const [file, spec] of Object.entries(DASHBOARDS)) {
      const cells = new Set<string>();
      for (const p of layout(spec)) {
        assert.ok(p.x >= 0 && p.x + p.w <= 24, `${file}: ${p.panel.title} leaves the grid`);
        for (let x = p.x; x < p.x + p.w; x++)
          for (let y = p.y; y < p.y + p.h; y++) {
            const cell = `${x},${y}`;
            assert.ok(!cells.has(cell), `${file}: ${p.panel.title} overlaps another panel at ${cell}`);
            cells.add(cell);
          }
      }
    }
  });

  it("give each panel a description and each dashboard a unique uid", () => {
    const uids = Object.values(DASHBOARDS).map((d) => d.uid);
    assert.equal(new Set(uids).size, uids.length);
    for (const spec of Object.values(DASHBOARDS))
      for (const p of layout(spec))
        assert.ok(p.panel.description.length > 10, `${spec.uid}: ${p.panel.title}`);
  });
});

describe("dashboard pictures", () => {
  it("draw every panel of every dashboard into a PNG as wide as the grid", async () => {
    const { dashboardSvg, xmlText } = await import("../support/dashboard-picture.js");
    const { dashboardPng } = await import("../support/render-dashboards.js");
    for (const spec of Object.values(DASHBOARDS)) {
      const svg = dashboardSvg(spec);
      for (const p of layout(spec)) {
        assert.ok(
          svg.includes(`>${xmlText(p.panel.title)}</text>`),
          `${spec.uid}: ${p.panel.title} is not drawn`,
        );
      }
      const png = dashboardPng(svg);
      assert.equal(png.subarray(1, 4).toString("latin1"), "PNG");
      assert.equal(png.readUInt32BE(16), 1600, "width");
    }
  });
});
