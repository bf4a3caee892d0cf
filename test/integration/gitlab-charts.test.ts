import assert from "node:assert/strict";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitLabConfigSourceLabel } from "../../src/apis/gitlabcore-names.js";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import {
  ChartNotFoundError,
  ChartPullError,
  ChartSource,
  type ChartSourceConfig,
  ChartSourceConfigError,
} from "../../src/targets/gitlab/charts/index.js";
import { HelmRunner, renderChart } from "../../src/targets/gitlab/render/index.js";
import { releaseSourceFromEnv } from "../../src/targets/gitlab/wiring.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { named, render } from "../support/chart-render.js";
import {
  buildFixtureRepository,
  type ChartRepoServer,
  type FixtureRepository,
  filesIn,
  indexRepository,
  packageCharts,
  startChartRepo,
} from "../support/chart-repo.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  installGitLabCrds,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

const caps = { kubeVersion: "v1.37.2", apiVersions: ["v1", "apps/v1", "batch/v1"] };
const values = { global: { hosts: { domain: "example.test" } } };

describe("gitlab charts: directory and verified pulls from a loopback HTTPS repository", () => {
  let fixtures: FixtureRepository;
  let served: string;
  let https: ChartRepoServer;
  let http: ChartRepoServer;
  let helm: HelmRunner;
  let work: string;
  let caches = 0;

  before(async () => {
    helm = new HelmRunner({ binary: await ensureHelm() });
    fixtures = await buildFixtureRepository();
    work = makeTempDir("gitlab-charts-test");
    // Three repositories side by side: as signed, one .prov missing, one archive swapped after signing.
    served = join(work, "served");
    await cp(fixtures.repoDir, join(served, "good"), { recursive: true });
    await cp(fixtures.repoDir, join(served, "noprov"), { recursive: true });
    await rm(join(served, "noprov", "gitlab-10.3.4.tgz.prov"));
    await cp(fixtures.repoDir, join(served, "tampered"), { recursive: true });
    // The same chart packaged again from an edited folder, unsigned, re-indexed so the index's digest
    // matches: only the signature can catch it.
    const edited = join(work, "edited", "gitlab", "10.3.4");
    await cp(join(fixtures.chartsDir, "gitlab", "10.3.4"), edited, { recursive: true });
    await writeFile(
      join(edited, "templates", "extra.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n",
    );
    await rm(join(served, "tampered", "gitlab-10.3.4.tgz"));
    await packageCharts([edited], join(served, "tampered"));
    await rm(join(served, "tampered", ".helm-home"), { recursive: true, force: true });
    await indexRepository(join(served, "tampered"));
    https = await startChartRepo(served);
    http = await startChartRepo(served, { protocol: "http" });
    // An https repository whose index sends the archive over plain http.
    await cp(join(served, "good"), join(served, "downgrade"), { recursive: true });
    const index = await readFile(join(served, "downgrade", "index.yaml"), "utf8");
    await writeFile(
      join(served, "downgrade", "index.yaml"),
      index.replace(/- gitlab-(\S+)\.tgz/g, `- ${http.url}good/gitlab-$1.tgz`),
    );
  });
  after(async () => {
    await https?.stop();
    await http?.stop();
    await fixtures?.cleanup();
    if (work) removeTempDir(work);
  });

  const config = (over: Partial<ChartSourceConfig> = {}): ChartSourceConfig => ({
    dynamicPull: true,
    repository: `${https.url}good/`,
    allowHttp: false,
    cacheDir: join(work, `cache-${caches++}`),
    indexTtlMs: 30 * 60_000,
    keyring: fixtures.key.pubring,
    caFile: https.caFile,
    ...over,
  });
  const tgzRequests = (server: ChartRepoServer, path: string) =>
    server.requests.filter((r) => r === path).length;

  it("lists the repository's versions from its index, fetched once per TTL", async () => {
    let now = 1_000_000;
    const source = new ChartSource(helm, config(), { now: () => now });
    const before = tgzRequests(https, "/good/index.yaml");
    assert.deepEqual(
      await source.listChartVersions(),
      fixtures.versions.map((v) => v.version),
    );
    await source.listChartVersions();
    now += 29 * 60_000;
    await source.listChartVersions();
    assert.equal(tgzRequests(https, "/good/index.yaml") - before, 1, "one index fetch within the TTL");
    now += 2 * 60_000;
    await source.listChartVersions();
    assert.equal(tgzRequests(https, "/good/index.yaml") - before, 2, "fetched again after the TTL");
  });

  it("pulls a chart signed by the keyring's key, keeps it verified in the cache, and renders it", async () => {
    const cfg = config();
    const source = new ChartSource(helm, cfg);
    const resolved = await source.resolve("10.3.4");
    assert.equal(resolved.origin, "repository");
    assert.equal(resolved.path, join(cfg.cacheDir!, "charts", "gitlab-10.3.4.tgz"));
    assert.deepEqual(await filesIn(join(cfg.cacheDir!, "charts")), [
      "gitlab-10.3.4.tgz",
      "gitlab-10.3.4.tgz.prov",
    ]);
    const r = await renderChart(helm, {
      chartDir: resolved.path,
      releaseName: "gl",
      namespace: "ns",
      values,
      capabilities: caps,
    });
    assert.equal(r.chart.version, "10.3.4");
    assert.equal(r.chart.appVersion, "19.3.4");
    assert.ok(r.objects.some((o) => o.kind === "StatefulSet" && o.metadata.name === "gl-gitaly"));

    // Again, and from a new source over the same cache (a restart): no second download.
    const downloads = tgzRequests(https, "/good/gitlab-10.3.4.tgz");
    assert.equal((await source.resolve("v10.3.4")).path, resolved.path);
    assert.equal((await new ChartSource(helm, cfg).resolve("10.3.4")).path, resolved.path);
    assert.equal(tgzRequests(https, "/good/gitlab-10.3.4.tgz"), downloads);
  });

  it("a cached chart that no longer verifies is dropped and pulled again", async () => {
    const cfg = config();
    const path = (await new ChartSource(helm, cfg).resolve("10.2.1")).path;
    const downloads = tgzRequests(https, "/good/gitlab-10.2.1.tgz");
    const bytes = await readFile(path);
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0xff;
    await writeFile(path, bytes);
    const again = await new ChartSource(helm, cfg).resolve("10.2.1");
    assert.equal(again.path, path);
    assert.equal(tgzRequests(https, "/good/gitlab-10.2.1.tgz"), downloads + 1);
  });

  const refused = async (cfg: ChartSourceConfig, version: string, reason: RegExp) => {
    const source = new ChartSource(helm, cfg);
    await assert.rejects(source.resolve(version), (e: unknown) => {
      assert.ok(e instanceof ChartPullError, String(e));
      assert.equal(e.reason, "ChartPullFailed");
      assert.match(e.message, reason);
      return true;
    });
    // Nothing unverified is left where a later pass could pick it up.
    assert.deepEqual(
      (await filesIn(join(cfg.cacheDir!, "charts"))).filter((f) => f.endsWith(".tgz")),
      [],
    );
  };

  it("refuses a chart signed by a key outside the keyring", async () => {
    await refused(
      config({ keyring: fixtures.otherKey.pubring }),
      "10.3.4",
      /gitlab 10\.3\.4: signature verification failed: openpgp: signature made by unknown entity/,
    );
  });

  it("refuses a chart without a provenance file", async () => {
    await refused(
      config({ repository: `${https.url}noprov/` }),
      "10.3.4",
      /no provenance file at .*gitlab-10\.3\.4\.tgz\.prov/,
    );
    // The other versions of that repository still verify.
    const ok = await new ChartSource(helm, config({ repository: `${https.url}noprov/` })).resolve("10.3.0");
    assert.equal(ok.origin, "repository");
  });

  it("refuses an archive swapped after signing, even when the index matches it", async () => {
    await refused(
      config({ repository: `${https.url}tampered/` }),
      "10.3.4",
      /signature verification failed: sha256 sum does not match/,
    );
  });

  it("refuses to pull at all without a keyring, and a version the index lacks", async () => {
    await refused(config({ keyring: undefined }), "10.3.4", /DYNAMIC_CHART_KEYRING is not set/);
    await refused(config(), "10.9.9", /gitlab 10\.9\.9: not in the index of https:\/\/127\.0\.0\.1/);
  });

  it("an armored keyring, re-read for every pull: a key added or removed applies to the next pull of the same source", async () => {
    const ring = join(work, "rings", "edited.asc");
    await mkdir(join(work, "rings"), { recursive: true });
    await writeFile(ring, fixtures.otherKey.armored);
    const cfg = config({ keyring: ring });
    // One source all along: what a running operator holds while its mounted keyring is edited.
    const source = new ChartSource(helm, cfg);
    await assert.rejects(source.resolve("10.3.4"), /signature verification failed: .*unknown entity/);
    await writeFile(ring, `${fixtures.otherKey.armored}\n${fixtures.key.armored}`);
    assert.equal((await source.resolve("10.3.4")).origin, "repository", "the added key verifies at once");
    await writeFile(ring, fixtures.otherKey.armored);
    await assert.rejects(source.resolve("10.3.4"), (e: unknown) => {
      assert.ok(e instanceof ChartPullError && e.reason === "ChartPullFailed", String(e));
      assert.match(e.message, /gitlab 10\.3\.4: signature verification failed/);
      return true;
    });
    assert.deepEqual(
      (await filesIn(join(cfg.cacheDir!, "charts"))).filter((f) => f.endsWith(".tgz")),
      [],
      "the cached chart its removed key signed is dropped",
    );
  });

  it("keys that do not load fail the pull, naming DYNAMIC_CHART_KEYRING", async () => {
    const dir = join(work, "bad-rings");
    await mkdir(dir, { recursive: true });
    const damaged = fixtures.key.armored.replace(
      /^([A-Za-z0-9+/]{20})([A-Za-z])/m,
      (_m, a: string, c: string) => `${a}${c === "A" ? "B" : "A"}`,
    );
    const cases: [string, string, RegExp][] = [
      ["empty.asc", "", /holds no public key, so no chart can be verified/],
      [
        "secret.asc",
        fixtures.key.secretArmored,
        /block 1 is a PGP private key block.*never belongs in a keyring/,
      ],
      ["damaged.asc", damaged, /block 1 does not match its checksum/],
    ];
    for (const [name, text, reason] of cases) {
      await writeFile(join(dir, name), text);
      await refused(config({ keyring: join(dir, name) }), "10.3.4", reason);
    }
    await refused(
      config({ keyring: join(dir, "absent.asc") }),
      "10.3.4",
      /DYNAMIC_CHART_KEYRING .*absent\.asc cannot be read \(ENOENT\)/,
    );
  });

  it("a failed pull is answered from memory for 10 minutes, then pulled again; a keyring change pulls at once", async () => {
    let now = 50_000_000;
    const ring = join(work, "rings", "memory.asc");
    await mkdir(join(work, "rings"), { recursive: true });
    await writeFile(ring, fixtures.otherKey.armored);
    const source = new ChartSource(helm, config({ keyring: ring }), { now: () => now });
    const path = "/good/gitlab-10.3.0.tgz";
    const before = tgzRequests(https, path);
    await assert.rejects(source.resolve("10.3.0"), /signature verification failed/);
    now += 9 * 60_000;
    await assert.rejects(source.resolve("10.3.0"), /signature verification failed/);
    assert.equal(tgzRequests(https, path) - before, 1, "not pulled again within 10 minutes");
    now += 60_000;
    await assert.rejects(source.resolve("10.3.0"), /signature verification failed/);
    assert.equal(tgzRequests(https, path) - before, 2, "pulled again after 10 minutes");
    await writeFile(ring, fixtures.key.armored);
    assert.equal((await source.resolve("10.3.0")).origin, "repository");
    assert.equal(tgzRequests(https, path) - before, 3, "a new keyring is not answered from memory");
  });

  it("the operator chart's keyring ConfigMap, as mounted, verifies what its trustedKeys signed", async () => {
    const objs = await render([
      "--set=targets.gitlab.enabled=true",
      `--set-json=dynamicChartPull.trustedKeys=${JSON.stringify([fixtures.otherKey.armored, fixtures.key.armored])}`,
    ]);
    const cm = named(objs, "ConfigMap", "po-chart-keyring");
    const deployment = named(objs, "Deployment", "po-gitlab");
    const env = deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    const keyringPath = env.find((e) => e.name === "DYNAMIC_CHART_KEYRING")?.value;
    assert.equal(keyringPath, "/etc/platform-operator/chart-keyring/keyring.asc");
    // The file the kubelet writes: the ConfigMap key under the mount.
    const file = join(work, "rings", "chart", "keyring.asc");
    await mkdir(join(work, "rings", "chart"), { recursive: true });
    await writeFile(file, cm.data["keyring.asc"]);
    assert.equal(
      (await new ChartSource(helm, config({ keyring: file })).resolve("10.1.2")).origin,
      "repository",
    );
  });

  it("GitLabCores of every version type: ChartPullFailed naming the version, phase Failed, no pull again within 10 minutes; a new key applies without restart", async () => {
    const client: KubeClient = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    const ns = await freshNamespace(client, "gl-pull");
    const ring = join(work, "rings", "operator.asc");
    await mkdir(join(work, "rings"), { recursive: true });
    await writeFile(ring, fixtures.otherKey.armored);
    const op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, (m) =>
      releaseSourceFromEnv(m, {
        HELM_BINARY: helm.binary,
        ENABLE_DYNAMIC_CHART_PULL: "true",
        DYNAMIC_CHART_REPOSITORY: `${https.url}good/`,
        DYNAMIC_CHART_CA_FILE: https.caFile,
        DYNAMIC_CHART_CACHE_DIRECTORY: join(work, `cache-${caches++}`),
        DYNAMIC_CHART_KEYRING: ring,
      }),
    );
    try {
      // Static, and no spec.version at all (Latest: the index's newest, 11.0.0).
      const cases = [
        { name: "pull-static", version: { type: "Static", version: "10.3.4" }, chart: "10.3.4" },
        { name: "pull-latest", version: undefined, chart: "11.0.0" },
      ];
      // A labelled ConfigMap both read (optional values, empty): each change of it wakes a pass of both.
      let pokes = 0;
      const poke = () =>
        client.apply(
          CONFIGMAP,
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "poke", namespace: ns, labels: { [GitLabConfigSourceLabel]: "true" } },
            data: { "values.yaml": `# poke ${++pokes}` },
          },
          { fieldManager: "test", force: true },
        );
      for (const c of cases)
        await applyGitLab(
          client,
          gitlabCore(ns, c.name, {
            ...(c.version ? { version: c.version } : {}),
            hostname: "gitlab.example.com",
            chart: { valuesFrom: [{ kind: "ConfigMap", name: "poke", optional: true }] },
          }),
        );
      const before = new Map(cases.map((c) => [c.name, tgzRequests(https, `/good/gitlab-${c.chart}.tgz`)]));
      for (const c of cases) {
        const o = await waitForGitLab(
          client,
          ns,
          c.name,
          (g) => conditionOf(g, "Initialized")?.reason === "ChartPullFailed",
          "ChartPullFailed",
          120_000,
        );
        assert.equal(o.status?.phase, "Failed");
        assert.match(
          conditionOf(o, "Initialized")!.message,
          new RegExp(`gitlab ${c.chart.replaceAll(".", "\\.")}: signature verification failed`),
        );
        // More passes: every one answered without a pull.
        const key = `${ns}/${c.name}`;
        for (let i = 1; i <= 3; i++) {
          const seen = op.passes(key);
          await poke();
          await eventually(async () => op.passes(key) > seen || undefined, 60_000, `${key}: pass ${i}`);
        }
        assert.equal(
          tgzRequests(https, `/good/gitlab-${c.chart}.tgz`) - before.get(c.name)!,
          1,
          `${c.name}: one pull of ${c.chart} for all its passes`,
        );
      }
      // The key that signed them, written into the same file: the next pass pulls and verifies,
      // the same operator process all along.
      await writeFile(ring, `${fixtures.otherKey.armored}\n${fixtures.key.armored}`);
      await poke();
      for (const c of cases) {
        const o = await waitForGitLab(
          client,
          ns,
          c.name,
          (g) =>
            g.status?.targetVersion === c.chart && conditionOf(g, "Progressing")?.reason === "HooksRunning",
          "the chart verified and its hooks started",
          120_000,
        );
        assert.equal(o.status?.phase, "Preparing", "no longer Failed: the chart verified and rendered");
        assert.match(
          conditionOf(o, "Progressing")!.message,
          new RegExp(`hooks of chart ${c.chart.replaceAll(".", "\\.")}`),
        );
      }
    } finally {
      await op.stop();
      client.close();
    }
  });

  it("refuses an untrusted TLS certificate", async () => {
    await refused(config({ caFile: undefined }), "10.3.4", /certificate/);
  });

  it("refuses http:// unless DYNAMIC_CHART_ALLOW_HTTP, and verifies the same over http when allowed", async () => {
    assert.throws(
      () => new ChartSource(helm, config({ repository: `${http.url}good/` })),
      (e: unknown) =>
        e instanceof ChartSourceConfigError &&
        /DYNAMIC_CHART_REPOSITORY: http:\/\/ is refused/.test(e.message),
    );
    const before = http.requests.length;
    const allowed = new ChartSource(helm, config({ repository: `${http.url}good/`, allowHttp: true }));
    assert.equal((await allowed.resolve("10.4.0")).origin, "repository");
    assert.ok(http.requests.length > before);
    await refused(
      config({ repository: `${http.url}good/`, allowHttp: true, keyring: fixtures.otherKey.pubring }),
      "10.4.0",
      /signature verification failed/,
    );
  });

  it("refuses an archive URL that leaves https, unless http is allowed", async () => {
    const downloads = tgzRequests(http, "/good/gitlab-10.3.0.tgz");
    await refused(
      config({ repository: `${https.url}downgrade/` }),
      "10.3.0",
      /http:\/\/ is refused unless DYNAMIC_CHART_ALLOW_HTTP=true/,
    );
    assert.equal(tgzRequests(http, "/good/gitlab-10.3.0.tgz"), downloads, "nothing was fetched over http");
    const allowed = await new ChartSource(
      helm,
      config({ repository: `${https.url}downgrade/`, allowHttp: true }),
    ).resolve("10.3.0");
    assert.equal(allowed.origin, "repository");
    assert.equal(tgzRequests(http, "/good/gitlab-10.3.0.tgz"), downloads + 1);
  });

  it("a repository that cannot be reached is a ChartPullError naming it", async () => {
    const source = new ChartSource(helm, config({ repository: "https://127.0.0.1:1/charts/" }));
    await assert.rejects(
      source.listChartVersions(),
      (e: unknown) =>
        e instanceof ChartPullError &&
        /https:\/\/127\.0\.0\.1:1\/charts\/index\.yaml: .*ECONNREFUSED/.test(e.message),
    );
  });

  it("takes a bundled chart first, and pulls only what the directory lacks", async () => {
    const cfg = config({ chartsDir: fixtures.chartsDir });
    const source = new ChartSource(helm, cfg);
    const before = https.requests.length;
    const bundled = await source.resolve("11.0.0");
    assert.deepEqual(bundled, {
      path: join(fixtures.chartsDir, "gitlab", "11.0.0"),
      version: "11.0.0",
      origin: "directory",
    });
    assert.equal(https.requests.length, before, "no request for a bundled chart");
  });

  it("without dynamic pull: versions come from the directory, and a missing version is named", async () => {
    const source = new ChartSource(helm, config({ dynamicPull: false, chartsDir: fixtures.chartsDir }));
    const before = https.requests.length;
    assert.deepEqual(
      await source.listChartVersions(),
      fixtures.versions.map((v) => v.version),
    );
    await assert.rejects(
      source.resolve("12.0.0"),
      (e: unknown) =>
        e instanceof ChartNotFoundError &&
        /gitlab 12\.0\.0 is not in the charts directory .*dynamic pull is off/.test(e.message),
    );
    assert.equal(https.requests.length, before);
  });
});
