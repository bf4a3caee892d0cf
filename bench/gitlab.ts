/**
 * GitLabCore benchmark: one GitLabCore reconciled by the gitlab target against a real
 * kube-apiserver and real helm, from the fixture chart. Prints the
 * time of the first render + apply, the objects applied, then the mean time of a quiet pass, the API
 * requests per quiet pass (goal: 0; the objects' own watches aside) next to the upstream
 * reconciler's (it force-applies every rendered object every 30 s: one PATCH per object per pass),
 * and the writes among them (every request that is not a GET: applies, dry runs, deletes, status,
 * events), counted by the operator's own client. Hooks are switched off: this cluster has
 * no node to run their Jobs (the integration tests run them on the local node).
 * Run with `npm run bench:gitlab`; BENCH_QUIET_PASSES sets how many quiet passes are measured (10).
 */
import { NAMESPACE } from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { registry } from "../src/runtime/metrics.js";
import { startControlPlane } from "../src/testenv/controlplane.js";
import {
  applyGitLab,
  fixtureChartsDir,
  fixtureVersions,
  gitlabCore,
  installGitLabCrds,
  startGitLabTarget,
} from "../test/support/gitlab.js";
import { eventually } from "../test/support/kube.js";

const NS = "bench-gitlab";
const NAME = "gitlab";
const QUIET = Number(process.env["BENCH_QUIET_PASSES"] ?? 10);

const say = (line: string) => process.stdout.write(`${line}\n`);

async function passHistogram(): Promise<{ sum: number; count: number }> {
  const m = await registry.getSingleMetric("gitlabcore_pass_duration_seconds")?.get();
  let sum = 0;
  let count = 0;
  for (const v of m?.values ?? []) {
    const name = (v as { metricName?: string }).metricName ?? "";
    if (name.endsWith("_sum")) sum += v.value;
    if (name.endsWith("_count")) count += v.value;
  }
  return { sum, count };
}

async function helmRenders(): Promise<number> {
  const m = await registry.getSingleMetric("gitlabcore_renders_total")?.get();
  return (m?.values ?? []).filter((v) => v.labels["cached"] === "false").reduce((n, v) => n + v.value, 0);
}

const cp = await startControlPlane({ log: (l) => process.stderr.write(`${l}\n`) });
const charts = fixtureChartsDir(fixtureVersions());
try {
  const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "bench-gitlab-setup");
  await installGitLabCrds(client);
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  const op = await startGitLabTarget(cp.kubeconfigPath, NS, charts.dir, { requeueInterval: "1s" });
  const key = `${NS}/${NAME}`;
  try {
    const started = performance.now();
    await applyGitLab(
      client,
      gitlabCore(NS, NAME, {
        version: { type: "Static", version: "10.4.0" },
        hostname: "gitlab.example.com",
        chart: { values: { "shared-secrets": { enabled: false }, global: { ingress: { enabled: true } } } },
      }),
    );
    await eventually(() => (op.passes(key) >= 1 ? true : undefined), 300_000, "the first pass");
    const firstMs = performance.now() - started;
    const applied = op.lines("applied the release", key).reduce((n, l) => n + Number(l["applied"] ?? 0), 0);
    // The pass after the first writes the status readiness moved to; quiet passes start after it.
    await eventually(() => (op.passes(key) >= 3 ? true : undefined), 120_000, "two more passes");
    const writesBefore = op.client.writeCount;
    const requestsBefore = op.client.requestCount;
    const histBefore = await passHistogram();
    const rendersBefore = await helmRenders();
    const passesBefore = op.passes(key);
    await eventually(
      () => (op.passes(key) >= passesBefore + QUIET ? true : undefined),
      QUIET * 20_000,
      `${QUIET} quiet passes`,
    );
    const histAfter = await passHistogram();
    const passes = op.passes(key) - passesBefore;
    const writes = op.client.writeCount - writesBefore;
    const requests = op.client.requestCount - requestsBefore;
    const helmRuns = (await helmRenders()) - rendersBefore;
    const quietMs =
      ((histAfter.sum - histBefore.sum) / Math.max(1, histAfter.count - histBefore.count)) * 1000;
    say(`first render + apply: ${(firstMs / 1000).toFixed(2)} s (GitLabCore created to first pass done)`);
    say(`objects applied: ${applied}`);
    say(`quiet pass: ${quietMs.toFixed(0)} ms mean over ${passes} passes`);
    say(
      `API requests per quiet pass: ${(requests / passes).toFixed(2)} (${requests} in ${passes}, watches aside); ` +
        `upstream reconciler: ${applied} (one PATCH per rendered object per 30 s pass)`,
    );
    say(`API writes per quiet pass: ${(writes / passes).toFixed(2)} (${writes} in ${passes})`);
    say(`helm renders per quiet pass: ${(helmRuns / passes).toFixed(2)} (the render cache answers)`);
  } finally {
    await op.stop();
    client.close();
  }
} finally {
  charts.remove();
  await cp.stop();
}
