import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore.js";
import { applyAny } from "../../src/runtime/apply.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { findBundledChart, listBundledVersions } from "../../src/targets/gitlab/charts/index.js";
import {
  type Capabilities,
  capabilitiesFromDiscovery,
  HelmRunner,
  RenderCache,
  RenderError,
  type RenderedObject,
  type RenderResult,
  renderChart,
  renderChartCached,
} from "../../src/targets/gitlab/render/index.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { type FixtureVersion, packageCharts, writeFixtureCharts } from "../support/chart-repo.js";
import { clientFor, freshNamespace } from "../support/kube.js";

const atLeast = (v: string, min: string) => {
  const [a, b] = [v, min].map((x) => x.split(".").map(Number)) as [number[], number[]];
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! > b[i]!;
  return true;
};

// The values the operator's layers would produce at the least: a domain, and the overrides.
const baseValues = {
  global: { hosts: { domain: "example.test" } },
  installCertmanager: false,
  "gitlab-runner": { install: false },
  "nginx-ingress": { enabled: false },
  haproxy: { install: false },
  traefik: { install: false },
};

/** The real chart's shared-secrets hooks' policy: deleted once every hook of the event succeeded. */
const SS_POLICY = "hook-succeeded,before-hook-creation";

describe("gitlab render: real helm over the fixture charts", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;
  let helm: HelmRunner;
  let caps: Capabilities;
  let versions: FixtureVersion[];

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "gl-render");
    helm = new HelmRunner({ binary: await ensureHelm() });
    dir = makeTempDir("gitlab-render");
    versions = await writeFixtureCharts(dir);
    caps = await capabilitiesFromDiscovery(client);
  });
  after(() => {
    client?.close();
    if (dir) removeTempDir(dir);
  });

  const chartDir = (v: string) => join(dir, "gitlab", v);
  const find = (r: RenderResult, kind: string, name: string): RenderedObject | undefined =>
    r.objects.find((o) => o.kind === kind && o.metadata.name === name);

  it("reads the cluster's capabilities from discovery", () => {
    assert.equal(caps.kubeVersion, "v1.37.2");
    for (const v of ["v1", "apps/v1", "apps/v1/Deployment", "batch/v1/Job", "v1/ConfigMap"])
      assert.ok(caps.apiVersions.includes(v), v);
    assert.ok(caps.clusterScoped?.includes("v1/Namespace"));
    assert.ok(!caps.clusterScoped?.includes("v1/ConfigMap"));
  });

  it("finds every fixture version in the charts directory layout", async () => {
    assert.deepEqual(
      await listBundledVersions(dir),
      versions.map((v) => v.version),
    );
    assert.equal(await findBundledChart(dir, "10.3.4"), chartDir("10.3.4"));
    assert.equal(await findBundledChart(dir, "10.3.5"), undefined);
    assert.equal(await findBundledChart(dir, "../../etc"), undefined);
  });

  it("renders each version with its objects, hooks and version behaviours", async () => {
    for (const { version, appVersion } of versions) {
      const r = await renderChart(helm, {
        chartDir: chartDir(version),
        releaseName: "gl",
        namespace: ns,
        values: baseValues,
        capabilities: caps,
      });
      const at = `chart ${version}`;
      assert.deepEqual(
        { name: r.chart.name, version: r.chart.version, appVersion: r.chart.appVersion },
        { name: "gitlab", version, appVersion },
        at,
      );
      assert.match(r.chart.digest, /^[0-9a-f]{64}$/);
      for (const [kind, name] of [
        ["Deployment", "gl-webservice"],
        ["Deployment", "gl-sidekiq"],
        ["StatefulSet", "gl-gitaly"],
        ["Service", "gl-webservice"],
        ["Service", "gl-gitaly"],
        ["ConfigMap", "gl-webservice"],
        ["ConfigMap", "gl-gitaly"],
        ["PodDisruptionBudget", "gl-webservice"],
      ] as const) {
        const o = find(r, kind, name);
        assert.ok(o, `${at}: ${kind} ${name}`);
        assert.equal(o.metadata.namespace, ns, `${at}: ${kind} ${name} namespace`);
        assert.equal(o.metadata.labels?.[GitLabReleaseNameLabel], "gl");
        assert.equal(o.metadata.labels?.[GitLabReleaseNamespaceLabel], ns);
      }
      // The migrations Job: a regular object, labelled with the GitLab version from 10.3 on.
      const migrations = find(r, "Job", `gl-migrations-${version.replaceAll(".", "-")}`);
      assert.ok(migrations, `${at}: migrations Job`);
      assert.equal(
        migrations.metadata.labels?.["gitlab.com/target-version"],
        atLeast(version, "10.3.0") ? appVersion : undefined,
        `${at}: target-version label`,
      );
      // Gateway API from 10.3, the Ingress until 11.
      const gatewayClass = find(r, "GatewayClass", `${ns}-gl-gitlab`);
      assert.equal(!!gatewayClass, atLeast(version, "10.3.0"), `${at}: GatewayClass`);
      if (gatewayClass)
        assert.equal(gatewayClass.metadata.namespace, undefined, "GatewayClass is cluster-scoped");
      assert.equal(
        r.objects.filter((o) => o.kind === "HTTPRoute").length,
        atLeast(version, "10.3.0") ? 2 : 0,
        `${at}: HTTPRoutes`,
      );
      assert.equal(!!find(r, "Ingress", "gl-webservice"), !atLeast(version, "11.0.0"), `${at}: Ingress`);
      const crd = find(r, "CustomResourceDefinition", "backupschedules.backup.gitlab.com");
      assert.equal(!!crd, atLeast(version, "10.4.0"), `${at}: CRD template`);
      if (crd) assert.equal(crd.metadata.namespace, undefined);
      // Hooks in helm's order (weight, then name, then kind), hook RBAC among them (the reconciler
      // skips it), none among objects. The chart's `test` Pod is left out by helm (--skip-tests):
      // only `helm test` runs it.
      assert.deepEqual(
        r.hooks.map((h) => [
          h.object.kind,
          h.object.metadata.name,
          h.events.join(","),
          h.weight,
          h.deletePolicies.join(","),
        ]),
        [
          ["ConfigMap", "gl-upgrade-check", "pre-upgrade", -11, "before-hook-creation"],
          ["Job", "gl-upgrade-check", "pre-upgrade", -10, "hook-succeeded,before-hook-creation"],
          ["ServiceAccount", "gl-shared-secrets", "pre-install,pre-upgrade", -5, SS_POLICY],
          ["Role", "gl-shared-secrets", "pre-install,pre-upgrade", -5, SS_POLICY],
          ["RoleBinding", "gl-shared-secrets", "pre-install,pre-upgrade", -5, SS_POLICY],
          ["ConfigMap", "gl-shared-secrets", "pre-install,pre-upgrade", -3, SS_POLICY],
          ["Job", "gl-shared-secrets", "pre-install,pre-upgrade", 0, SS_POLICY],
        ],
        `${at}: hooks`,
      );
      for (const h of r.hooks) assert.equal(h.object.metadata.namespace, ns);
      const script = String((r.hooks[5]!.object["data"] as Record<string, string>)["generate-secrets"]);
      assert.equal(script.includes("gl-kas-secret"), atLeast(version, "10.4.0"), `${at}: kas secret`);
      assert.ok(!r.objects.some((o) => o.metadata.annotations?.["helm.sh/hook"]));
      assert.ok(!r.objects.concat(r.hooks.map((h) => h.object)).some((o) => o.kind === "Pod"));
    }
  });

  it("the rendered objects of built-in kinds are accepted by the real API server (dry run)", async () => {
    const r = await renderChart(helm, {
      chartDir: chartDir("10.4.0"),
      releaseName: "gl",
      namespace: ns,
      values: { ...baseValues, global: { ...baseValues.global, gatewayApi: { enabled: false } } },
      capabilities: caps,
    });
    const builtIn = [...r.objects, ...r.hooks.map((h) => h.object)].filter(
      (o) => o.kind !== "CustomResourceDefinition" && o.kind !== "Ingress",
    );
    assert.ok(builtIn.length >= 14, `${builtIn.length} objects`);
    for (const o of builtIn) {
      await applyAny(client, o, { fieldManager: "gitlab-render-test", dryRun: true });
    }
  });

  it("honours the capabilities: a template gated on an API version renders only where it is served", async () => {
    const req = { chartDir: chartDir("10.3.4"), releaseName: "gl", namespace: ns, values: baseValues };
    // Other suites may install definitions on the shared API server: the gate's API is left out here.
    const without = await renderChart(helm, {
      ...req,
      capabilities: {
        ...caps,
        apiVersions: caps.apiVersions.filter((v) => !v.startsWith("monitoring.coreos.com/")),
      },
    });
    assert.equal(find(without, "ServiceMonitor", "gl-webservice"), undefined);
    const withMonitoring = await renderChart(helm, {
      ...req,
      capabilities: {
        ...caps,
        apiVersions: [
          ...caps.apiVersions,
          "monitoring.coreos.com/v1",
          "monitoring.coreos.com/v1/ServiceMonitor",
        ],
      },
    });
    assert.ok(find(withMonitoring, "ServiceMonitor", "gl-webservice"));
  });

  it("renders each Gateway API mode the operator derives, and the OpenBao stand-in", async () => {
    const render = async (extra: Record<string, unknown>) => {
      const r = await renderChart(helm, {
        chartDir: chartDir("10.4.0"),
        releaseName: "gl",
        namespace: ns,
        values: { ...baseValues, ...extra, global: { ...baseValues.global, ...(extra["global"] as object) } },
        capabilities: caps,
      });
      const kinds = (k: string) => r.objects.filter((o) => o.kind === k);
      return { r, classes: kinds("GatewayClass"), gateways: kinds("Gateway"), routes: kinds("HTTPRoute") };
    };
    const parents = (routes: RenderedObject[]) =>
      routes.map((o) => (o["spec"] as { parentRefs: { name: string; namespace?: string }[] }).parentRefs[0]);

    const off = await render({ global: { gatewayApi: { enabled: false } } });
    assert.deepEqual([off.classes.length, off.gateways.length, off.routes.length], [0, 0, 0]);

    const issuer = { "cert-manager.io/cluster-issuer": "letsencrypt" };
    const envoy = await render({
      global: { gatewayApi: { enabled: true, class: { name: `${ns}-gl-gitlab` } } },
      gatewayApiResources: { class: { enabled: true }, gateway: { annotations: issuer } },
    });
    assert.deepEqual(
      envoy.classes.map((o) => o.metadata.name),
      [`${ns}-gl-gitlab`],
    );
    assert.deepEqual(envoy.gateways[0]?.metadata.annotations, issuer);
    assert.equal(
      (envoy.gateways[0]!["spec"] as { gatewayClassName: string }).gatewayClassName,
      `${ns}-gl-gitlab`,
    );

    const byClass = await render({
      global: { gatewayApi: { enabled: true, class: { name: "platform-gw" } } },
      gatewayApiResources: { class: { enabled: false } },
    });
    assert.equal(byClass.classes.length, 0);
    assert.equal(
      (byClass.gateways[0]!["spec"] as { gatewayClassName: string }).gatewayClassName,
      "platform-gw",
    );

    const byGateway = await render({
      global: { gatewayApi: { enabled: true, gatewayRef: { name: "shared", namespace: "infra" } } },
      gatewayApiResources: { class: { enabled: false } },
    });
    assert.deepEqual([byGateway.classes.length, byGateway.gateways.length], [0, 0]);
    assert.deepEqual(parents(byGateway.routes), [
      { name: "shared", namespace: "infra" },
      { name: "shared", namespace: "infra" },
    ]);

    const bao = await render({
      global: { openbao: { enabled: true } },
      openbao: {
        install: true,
        serviceAccount: { create: false, name: "bao" },
        config: {
          storage: {
            postgresql: {
              connection: { host: "pg.db", port: 5433, password: { secret: "bao-db", key: "password" } },
            },
          },
        },
      },
    });
    const data = bao.r.objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "gl-openbao")?.[
      "data"
    ] as Record<string, string> | undefined;
    assert.match(
      data?.["database"] ?? "",
      /host: "pg\.db"\nport: 5433\ndatabase: "openbao"\nusername: "openbao"\npassword_secret: "bao-db"/,
    );
    assert.equal(data?.["service_account"], "bao");
  });

  it("reads the GitLab version override into the migrations label", async () => {
    const r = await renderChart(helm, {
      chartDir: chartDir("10.3.4"),
      releaseName: "gl",
      namespace: ns,
      values: { ...baseValues, global: { ...baseValues.global, gitlabVersion: "19.3.9" } },
      capabilities: caps,
    });
    assert.equal(
      find(r, "Job", "gl-migrations-10-3-4")?.metadata.labels?.["gitlab.com/target-version"],
      "19.3.9",
    );
  });

  it("a schema violation fails with the field named and the offending value redacted", async () => {
    const secret = "Sup3r-S3cret-Domain!";
    await assert.rejects(
      renderChart(helm, {
        chartDir: chartDir("10.3.4"),
        releaseName: "gl",
        namespace: ns,
        values: { global: { hosts: { domain: secret } } },
        capabilities: caps,
      }),
      (e: unknown) => {
        assert.ok(e instanceof RenderError, String(e));
        assert.equal(e.reason, "RenderFailed");
        assert.equal(e.field, "global.hosts.domain");
        assert.match(
          e.message,
          /gitlab 10\.3\.4: values violate the chart's schema at global\.hosts\.domain/,
        );
        assert.match(e.message, /does not match pattern/);
        assert.ok(!e.message.includes(secret), e.message);
        return true;
      },
    );
    await assert.rejects(
      renderChart(helm, {
        chartDir: chartDir("10.3.4"),
        releaseName: "gl",
        namespace: ns,
        values: {
          global: { hosts: { domain: "example.test" } },
          gitlab: { webservice: { replicas: "two" } },
        },
        capabilities: caps,
      }),
      (e: unknown) => e instanceof RenderError && e.field === "gitlab.webservice.replicas",
    );
    await assert.rejects(
      renderChart(helm, {
        chartDir: chartDir("10.3.4"),
        releaseName: "gl",
        namespace: ns,
        values: { global: { hosts: { domain: secret }, edition: "enterprise-edition-secret" } },
        capabilities: caps,
      }),
      (e: unknown) => {
        assert.ok(e instanceof RenderError);
        assert.deepEqual([...e.fields].sort(), ["global.edition", "global.hosts.domain"]);
        assert.ok(!e.message.includes(secret) && !e.message.includes("enterprise-edition-secret"), e.message);
        return true;
      },
    );
  });

  it("a chart's own refusal (checkConfig) is a RenderError with helm's message", async () => {
    await assert.rejects(
      renderChart(helm, {
        chartDir: chartDir("10.3.4"),
        releaseName: "gl",
        namespace: ns,
        values: {
          ...baseValues,
          global: { ...baseValues.global, appConfig: { object_store: { enabled: true } } },
        },
        capabilities: caps,
      }),
      (e: unknown) =>
        e instanceof RenderError &&
        e.field === undefined &&
        /the connection property can not be empty/.test(e.message) &&
        !/Use --debug/.test(e.message),
    );
  });

  it("refuses bad requests before running helm, naming the field", async () => {
    const req = {
      chartDir: chartDir("10.3.4"),
      releaseName: "gl",
      namespace: ns,
      values: baseValues,
      capabilities: caps,
    };
    await assert.rejects(renderChart(helm, { ...req, releaseName: "Bad_Name" }), /releaseName: "Bad_Name"/);
    await assert.rejects(renderChart(helm, { ...req, namespace: "--evil" }), /namespace: "--evil"/);
    await assert.rejects(
      renderChart(helm, { ...req, capabilities: { ...caps, apiVersions: ["--set=x"] } }),
      /capabilities\.apiVersions/,
    );
    await assert.rejects(renderChart(helm, { ...req, values: ["a"] }), /values: must be a map/);
    await assert.rejects(
      renderChart(helm, { ...req, chartDir: join(dir, "nowhere") }),
      /cannot be read: ENOENT/,
    );
  });

  it("renders a packaged chart the same as its folder, and the cache skips helm for unchanged inputs", async () => {
    const [archive] = await packageCharts([chartDir("10.3.4")], join(dir, "packaged"));
    const req = { releaseName: "gl", namespace: ns, values: baseValues, capabilities: caps };
    const fromDir = await renderChart(helm, { ...req, chartDir: chartDir("10.3.4") });
    const fromArchive = await renderChart(helm, { ...req, chartDir: archive! });
    assert.deepEqual(fromArchive.objects, fromDir.objects);
    assert.deepEqual(fromArchive.hooks, fromDir.hooks);
    assert.equal(fromArchive.chart.appVersion, "19.3.4");
    assert.notEqual(fromArchive.chart.digest, fromDir.chart.digest);

    const cache = new RenderCache(8);
    const templates = () => helm.counts.get("template") ?? 0;
    const first = await renderChartCached(helm, cache, { ...req, chartDir: archive! });
    const afterFirst = templates();
    const again = await renderChartCached(helm, cache, {
      ...req,
      chartDir: archive!,
      values: JSON.parse(JSON.stringify(baseValues)),
    });
    assert.equal(first.cached, false);
    assert.equal(again.cached, true);
    assert.equal(templates(), afterFirst, "a cache hit runs no helm template");
    assert.equal(again.key, first.key);
    assert.deepEqual(again.objects, first.objects);
    const changed = await renderChartCached(helm, cache, {
      ...req,
      chartDir: archive!,
      values: { ...baseValues, gitlab: { webservice: { replicas: 2 } } },
    });
    assert.equal(changed.cached, false);
    const spec = find(changed, "Deployment", "gl-webservice")?.["spec"] as { replicas?: number } | undefined;
    assert.equal(spec?.replicas, 2);
  });
});
