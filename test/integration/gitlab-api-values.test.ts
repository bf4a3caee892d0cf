import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { parse } from "yaml";
import type { GitLabCoreSpec } from "../../src/apis/gitlabcore.js";
import type { KubeClient } from "../../src/runtime/client.js";
import {
  type Capabilities,
  capabilitiesFromDiscovery,
  HelmRunner,
  RenderError,
  type RenderedObject,
  type RenderResult,
  renderChart,
} from "../../src/targets/gitlab/render/index.js";
import { validateGitLabCore } from "../../src/targets/gitlab/validate.js";
import { effectiveValues, type Values } from "../../src/targets/gitlab/values/index.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { type FixtureVersion, writeFixtureCharts } from "../support/chart-repo.js";
import { clientFor, freshNamespace } from "../support/kube.js";

// The effective values of GitLabCore specs rendered by the real helm over every fixture chart
// version: the derived layer reaches the templates (hosts, edition images, external services,
// Gateway API modes and the issuer annotation), the overrides keep the cluster-wide installers off,
// and offline `validate` refuses exactly the values helm's own values.schema.json check refuses.

const NAME = "gl";

const spec = (extra: Partial<GitLabCoreSpec> = {}): GitLabCoreSpec => ({
  version: { type: "Static", version: "10.4.0" },
  hostname: "code.example.org",
  ...extra,
});

const atLeast = (v: string, min: string): boolean => {
  const [a, b] = [v, min].map((x) => x.split(".").map(Number)) as [number[], number[]];
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! > b[i]!;
  return true;
};

describe("gitlab effective values through real helm", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;
  let helm: HelmRunner;
  let caps: Capabilities;
  let versions: FixtureVersion[];

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "gl-values");
    helm = new HelmRunner({ binary: await ensureHelm() });
    dir = makeTempDir("gitlab-values");
    versions = await writeFixtureCharts(dir);
    caps = await capabilitiesFromDiscovery(client);
  });
  after(() => {
    client?.close();
    if (dir) removeTempDir(dir);
  });

  const valuesFor = (s: GitLabCoreSpec, version: string): Values => {
    const r = effectiveValues({
      name: NAME,
      namespace: ns,
      spec: s,
      chartVersion: version,
      managerServiceAccount: "platform-operator",
    });
    assert.ok(r.ok, JSON.stringify(r));
    return r.values;
  };

  const render = (s: GitLabCoreSpec, version: string): Promise<RenderResult> =>
    renderChart(helm, {
      chartDir: join(dir, "gitlab", version),
      releaseName: NAME,
      namespace: ns,
      values: valuesFor(s, version),
      capabilities: caps,
    });

  const all = (r: RenderResult): RenderedObject[] => [...r.objects, ...r.hooks.map((h) => h.object)];
  const ofKind = (r: RenderResult, kind: string) => all(r).filter((o) => o.kind === kind);
  const envOf = (o: RenderedObject, name: string): string | undefined => {
    const containers =
      (
        o as {
          spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } };
        }
      ).spec?.template?.spec?.containers ?? [];
    return containers.flatMap((c) => c.env ?? []).find((e) => e.name === name)?.value;
  };

  it("every fixture version renders a full spec's values, with the derived hosts and edition", async () => {
    const full = spec({
      edition: "ce",
      postgresql: { host: "pg.db.svc", passwordSecretRef: { name: "pg", key: "password" } },
      redis: { host: "valkey.db.svc", passwordSecretRef: { name: "valkey", key: "password" } },
      objectStorage: { connectionSecretRef: { name: "s3", key: "connection" } },
      openbao: { postgresql: { host: "bao-pg.db.svc", passwordSecretRef: { name: "bao", key: "password" } } },
    });
    assert.ok(versions.length >= 5);
    for (const { version } of versions) {
      const r = await render(full, version);
      // No mode set: the Gateway API is off, so no GatewayClass whatever the version.
      assert.deepEqual(ofKind(r, "GatewayClass"), [], `${version}: GatewayClass rendered`);
      const web = ofKind(r, "Deployment").find((d) => d.metadata.name === `${NAME}-webservice`);
      assert.ok(web, `${version}: no webservice`);
      assert.match(envOf(web, "GITLAB_IMAGE") ?? "", /-ce:v/, `${version}: edition image`);
      // The overrides reach the chart: its shared-secrets hook uses the manager's ServiceAccount and
      // no hook RBAC is rendered.
      assert.deepEqual(ofKind(r, "Role"), [], `${version}: hook RBAC rendered`);
      assert.deepEqual(
        ofKind(r, "ServiceAccount").map((o) => o.metadata.name),
        [],
        `${version}: a ServiceAccount was rendered`,
      );
      const job = ofKind(r, "Job").find((j) => j.metadata.name === `${NAME}-shared-secrets`);
      assert.equal(
        (job as { spec?: { template?: { spec?: { serviceAccountName?: string } } } } | undefined)?.spec
          ?.template?.spec?.serviceAccountName,
        "platform-operator",
        `${version}: shared-secrets ServiceAccount`,
      );
    }
  });

  it("Gateway API modes on 10.4.0+: Envoy controller class per instance, existing class, issuer annotation", async () => {
    for (const { version } of versions.filter((v) => atLeast(v.version, "10.4.0"))) {
      const envoy = await render(
        spec({
          networking: {
            envoyGatewayController: {
              certManager: { issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" } },
            },
          },
        }),
        version,
      );
      const classes = ofKind(envoy, "GatewayClass");
      assert.deepEqual(
        classes.map((c) => c.metadata.name),
        [`${ns}-${NAME}-gitlab`],
        `${version}: envoy mode renders this instance's class`,
      );
      const gw = ofKind(envoy, "Gateway")[0];
      assert.equal(gw?.metadata.annotations?.["cert-manager.io/cluster-issuer"], "letsencrypt");
      assert.deepEqual(
        ofKind(envoy, "HTTPRoute")
          .flatMap((h) => (h as { spec?: { hostnames?: string[] } }).spec?.hostnames ?? [])
          .sort(),
        ["code.example.org", "registry.example.org"],
        `${version}: routes on the hostname and its sibling`,
      );

      const existing = await render(
        spec({ networking: { gatewayClass: { name: "envoy-public" } } }),
        version,
      );
      assert.deepEqual(
        ofKind(existing, "GatewayClass"),
        [],
        `${version}: gatewayClass mode renders no class`,
      );
      assert.equal(
        (ofKind(existing, "Gateway")[0] as { spec?: { gatewayClassName?: string } } | undefined)?.spec
          ?.gatewayClassName,
        "envoy-public",
      );
    }
  });

  it("an existing Gateway: routes attach to it, no Gateway or GatewayClass of the release", async () => {
    for (const { version } of versions.filter((v) => atLeast(v.version, "10.3.0"))) {
      const r = await render(
        spec({ networking: { gateway: { name: "shared", namespace: "infra" } } }),
        version,
      );
      assert.deepEqual(ofKind(r, "Gateway"), [], `${version}: a Gateway was rendered`);
      assert.deepEqual(ofKind(r, "GatewayClass"), [], `${version}: a GatewayClass was rendered`);
      const parents = ofKind(r, "HTTPRoute").flatMap(
        (h) =>
          (h as { spec?: { parentRefs?: { name: string; namespace?: string }[] } }).spec?.parentRefs ?? [],
      );
      assert.ok(parents.length >= 2);
      for (const p of parents) assert.deepEqual(p, { name: "shared", namespace: "infra" });
    }
  });

  it("OpenBao: the subchart gets its own database connection and ServiceAccount, no password", async () => {
    const r = await render(
      spec({
        postgresql: { host: "pg.db.svc", passwordSecretRef: { name: "gitlab-pg", key: "password" } },
        openbao: {
          postgresql: { host: "bao-pg.db.svc", port: 6432, passwordSecretRef: { name: "bao-pg", key: "pw" } },
          serviceAccount: { name: "openbao" },
        },
      }),
      "10.4.0",
    );
    const cm = ofKind(r, "ConfigMap").find((c) => c.metadata.name === `${NAME}-openbao`) as
      | { data?: Record<string, string> }
      | undefined;
    assert.ok(cm?.data, "no OpenBao stand-in rendered");
    const db = parse(cm.data["database"] ?? "") as Values;
    assert.deepEqual(db, {
      host: "bao-pg.db.svc",
      port: 6432,
      database: "openbao",
      username: "openbao",
      password_secret: "bao-pg",
    });
    assert.equal(cm.data["service_account"], "openbao");
  });

  it("an apex hostname is its own domain in the rendered routes", async () => {
    const r = await render(
      spec({ hostname: "example.co.uk", networking: { gatewayClass: { name: "c" } } }),
      "10.4.0",
    );
    assert.deepEqual(
      ofKind(r, "HTTPRoute")
        .flatMap((h) => (h as { spec?: { hostnames?: string[] } }).spec?.hostnames ?? [])
        .sort(),
      ["example.co.uk", "registry.example.co.uk"],
    );
  });

  it("validate refuses exactly the values helm's values.schema.json check refuses", async () => {
    const cases: { what: string; values: Values }[] = [
      { what: "conforming values", values: { gitlab: { webservice: { replicas: 2 } } } },
      { what: "a negative replica count", values: { gitlab: { webservice: { replicas: -1 } } } },
      { what: "an edition the chart does not know", values: { global: { edition: "premium" } } },
      { what: "a port as a string", values: { global: { psql: { port: "5432" } } } },
      { what: "an empty domain", values: { global: { hosts: { domain: "" } } } },
      { what: "a migrations knob of the wrong type", values: { gitlab: { migrations: { fail: "yes" } } } },
      { what: "free-form keys the schema leaves open", values: { anything: { goes: [1, "two"] } } },
    ];
    const disagreements: string[] = [];
    let refusedByBoth = 0;
    for (const { version } of versions) {
      for (const c of cases) {
        const s = spec({ version: { type: "Static", version }, chart: { values: c.values } });
        let helmRefused: string | undefined;
        try {
          await render(s, version);
        } catch (e) {
          if (!(e instanceof RenderError)) throw e;
          helmRefused = e.field ?? e.message;
        }
        const offline = validateGitLabCore(
          {
            apiVersion: "apps.gitlab.com/v2alpha1",
            kind: "GitLabCore",
            metadata: { name: NAME, namespace: ns },
            spec: s,
          },
          { chartsDir: dir },
        );
        const validateRefused = offline.length > 0;
        if (validateRefused && helmRefused) refusedByBoth++;
        if (validateRefused !== (helmRefused !== undefined))
          disagreements.push(
            `${version} ${c.what}: helm ${helmRefused ? `refused (${helmRefused})` : "accepted"}, validate ${
              validateRefused
                ? `refused (${offline.map((p) => `${p.field}: ${p.message}`).join("; ")})`
                : "accepted"
            }`,
          );
        // Where both refuse, they name the same values path.
        if (helmRefused && validateRefused && !offline.some((p) => p.field?.endsWith(helmRefused)))
          disagreements.push(
            `${version} ${c.what}: helm names ${helmRefused}, validate ${JSON.stringify(offline)}`,
          );
      }
    }
    assert.deepEqual(disagreements, []);
    // Five refusing cases on every version: the agreement is not two checks that never refuse.
    assert.equal(refusedByBoth, 5 * versions.length);
  });
});
