import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GitLabCoreSpec } from "../../src/apis/gitlabcore.js";
import { type PassOutcome, planStatus } from "../../src/targets/gitlab/status/plan.js";
import { validateGitLabCore } from "../../src/targets/gitlab/validate.js";
import {
  clickHouseEnabledIn,
  type EffectiveValues,
  effectiveValues,
  type Values,
  valueAt,
} from "../../src/targets/gitlab/values/index.js";

// The newer GitLabCore fields (issue 44) in the derived values layer, and their offline rules:
// spec.certificates.customCAs, spec.clickhouse, spec.domain, spec.components.openbao, configureEnvoy.

const base = (extra: Partial<GitLabCoreSpec> = {}): GitLabCoreSpec => ({
  version: { type: "Static", version: "10.4.0" },
  hostname: "gitlab.example.com",
  ...extra,
});

const run = (spec: GitLabCoreSpec, chartVersion: string | undefined = "10.4.0"): EffectiveValues =>
  effectiveValues({ name: "gitlab", namespace: "gl", spec, chartVersion });

const values = (r: EffectiveValues): Values => {
  assert.ok(r.ok, `expected values, got ${JSON.stringify(r)}`);
  return r.values;
};

const clickhouse = {
  url: "https://ch.example.com:8443",
  database: "gitlab_main",
  user: "gitlab",
  passwordSecretRef: { name: "ch", key: "password" },
};

const openbao = { postgresql: { host: "pg.example.com", passwordSecretRef: { name: "bao-pg", key: "pw" } } };

describe("gitlab values: trusted CAs", () => {
  it("derives global.certificates.customCAs in the chart's entry shape, keys only when given", () => {
    const v = values(
      run(
        base({
          certificates: {
            customCAs: [{ secret: "corp-ca" }, { configMap: "trust-bundle", keys: ["root.pem", "int.pem"] }],
          },
        }),
      ),
    );
    assert.deepEqual(valueAt(v, "global.certificates.customCAs"), [
      { secret: "corp-ca" },
      { configMap: "trust-bundle", keys: ["root.pem", "int.pem"] },
    ]);
  });

  it("sets nothing without entries", () => {
    assert.equal(valueAt(values(run(base())), "global.certificates.customCAs"), undefined);
    assert.equal(
      valueAt(values(run(base({ certificates: { customCAs: [] } }))), "global.certificates.customCAs"),
      undefined,
    );
  });

  it("the same key in spec.chart.values replaces the whole list, not merging entries", () => {
    const v = values(
      run(
        base({
          certificates: { customCAs: [{ secret: "a" }, { secret: "b" }] },
          chart: { values: { global: { certificates: { customCAs: [{ configMap: "mine" }] } } } },
        }),
      ),
    );
    assert.deepEqual(valueAt(v, "global.certificates.customCAs"), [{ configMap: "mine" }]);
  });
});

describe("gitlab values: ClickHouse", () => {
  it("derives global.clickhouse.main and names the password Secret without reading it", () => {
    const v = values(run(base({ clickhouse })));
    assert.deepEqual(valueAt(v, "global.clickhouse.main"), {
      url: "https://ch.example.com:8443",
      database: "gitlab_main",
      username: "gitlab",
      password: { secret: "ch", key: "password" },
    });
    assert.equal(clickHouseEnabledIn(v), true);
  });

  it("is off without spec.clickhouse, and chart values win over it either way", () => {
    assert.equal(clickHouseEnabledIn(values(run(base()))), false);
    // Chart values turn it off (a null deletes the URL, as Helm does)...
    const off = values(
      run(base({ clickhouse, chart: { values: { global: { clickhouse: { main: { url: null } } } } } })),
    );
    assert.equal(clickHouseEnabledIn(off), false);
    // ...or change the URL the integration uses.
    const changed = values(
      run(
        base({
          clickhouse,
          chart: { values: { global: { clickhouse: { main: { url: "http://other:8123" } } } } },
        }),
      ),
    );
    assert.equal(valueAt(changed, "global.clickhouse.main.url"), "http://other:8123");
    assert.equal(valueAt(changed, "global.clickhouse.main.database"), "gitlab_main");
    // ...or turn it on without the structured field.
    const on = values(
      run(base({ chart: { values: { global: { clickhouse: { main: { url: "http://ch:8123" } } } } } })),
    );
    assert.equal(clickHouseEnabledIn(on), true);
  });
});

describe("gitlab values: spec.domain", () => {
  it("serves every component under the domain: gitlab.<domain>, registry.<domain>, kas.<domain>", () => {
    const { hostname: _, ...rest } = base();
    const v = values(run({ ...rest, domain: "example.com" }));
    assert.deepEqual(valueAt(v, "global.hosts"), {
      domain: "example.com",
      gitlab: { name: "gitlab.example.com" },
      registry: { name: "registry.example.com" },
      kas: { name: "kas.example.com" },
    });
    // A subdomain is taken as given, unlike a hostname whose first label is stripped.
    const sub = values(run({ ...rest, domain: "dev.example.com" }));
    assert.equal(valueAt(sub, "global.hosts.domain"), "dev.example.com");
    assert.equal(valueAt(sub, "global.hosts.gitlab.name"), "gitlab.dev.example.com");
  });

  it("refuses a public suffix, naming spec.domain", () => {
    const { hostname: _, ...rest } = base();
    const r = run({ ...rest, domain: "co.uk" });
    assert.ok(!r.ok);
    assert.equal(r.errors[0]?.field, "spec.domain");
    assert.match(r.errors[0]!.message, /public suffix/);
  });
});

describe("gitlab values: spec.components.openbao", () => {
  it("derives exactly what spec.openbao does", () => {
    const newer = values(run(base({ components: { openbao } })));
    const older = values(run(base({ openbao })));
    assert.deepEqual(newer, older);
    assert.equal(valueAt(newer, "global.openbao.enabled"), true);
    assert.equal(valueAt(newer, "openbao.config.storage.postgresql.connection.host"), "pg.example.com");
  });
});

describe("gitlab values: configureEnvoy", () => {
  it("is on for envoyGatewayController, and follows the field for gatewayClass and gateway", () => {
    const at = (spec: GitLabCoreSpec) => valueAt(values(run(spec)), "global.gatewayApi.configureEnvoy");
    assert.equal(at(base({ networking: { envoyGatewayController: {} } })), true);
    assert.equal(at(base({ networking: { gatewayClass: { name: "eg" } } })), false);
    assert.equal(at(base({ networking: { gatewayClass: { name: "eg", configureEnvoy: true } } })), true);
    assert.equal(at(base({ networking: { gateway: { name: "gw" } } })), false);
    assert.equal(at(base({ networking: { gateway: { name: "gw", configureEnvoy: true } } })), true);
    assert.equal(at(base()), undefined);
  });

  it("refuses configureEnvoy on a gateway for a chart before 10.4.0, and leaves the key out when off", () => {
    const r = run(base({ networking: { gateway: { name: "gw", configureEnvoy: true } } }), "9.3.0");
    assert.ok(!r.ok);
    assert.equal(r.errors[0]?.field, "spec.networking.gateway.configureEnvoy");
    const old = values(run(base({ networking: { gateway: { name: "gw" } } }), "9.3.0"));
    assert.equal(valueAt(old, "global.gatewayApi.configureEnvoy"), undefined);
  });
});

describe("gitlab validate: the newer fields' rules offline", () => {
  const doc = (spec: Record<string, unknown>) => ({
    apiVersion: "apps.gitlab.com/v2alpha1",
    kind: "GitLabCore",
    metadata: { name: "gl", namespace: "gl" },
    spec: { version: { type: "Static", version: "10.4.0" }, ...spec },
  });
  const fields = (spec: Record<string, unknown>) =>
    validateGitLabCore(doc(spec)).map((p) => `${p.field}: ${p.message}`);

  it("accepts each newer field when well formed", () => {
    assert.deepEqual(fields({ domain: "example.com", clickhouse, components: { openbao } }), []);
    assert.deepEqual(
      fields({
        hostname: "gitlab.example.com",
        certificates: { customCAs: [{ secret: "a", keys: ["ca.crt"] }] },
      }),
      [],
    );
  });

  it("mirrors the CEL rules: hostname xor domain, one openbao name, one CA source, http(s) url", () => {
    assert.deepEqual(fields({}), ["spec.hostname: set exactly one of hostname and domain"]);
    assert.deepEqual(fields({ hostname: "gitlab.example.com", domain: "example.com" }), [
      "spec.hostname: set exactly one of hostname and domain",
    ]);
    assert.deepEqual(fields({ hostname: "gitlab.example.com", openbao, components: { openbao } }), [
      "spec.components.openbao: set spec.components.openbao or spec.openbao, not both",
    ]);
    assert.deepEqual(
      fields({
        hostname: "gitlab.example.com",
        certificates: { customCAs: [{ secret: "a", configMap: "b" }, {}] },
      }),
      [
        "spec.certificates.customCAs[0]: set exactly one of secret and configMap",
        "spec.certificates.customCAs[1]: set exactly one of secret and configMap",
      ],
    );
    assert.deepEqual(
      fields({ hostname: "gitlab.example.com", clickhouse: { ...clickhouse, url: "tcp://ch:9000" } }),
      ["spec.clickhouse.url: url must be an http:// or https:// URL"],
    );
  });

  it("refuses a ClickHouse connection missing any of its four fields", () => {
    for (const k of ["url", "database", "user", "passwordSecretRef"]) {
      const partial = { ...clickhouse } as Record<string, unknown>;
      delete partial[k];
      const found = fields({ hostname: "gitlab.example.com", clickhouse: partial });
      assert.ok(found.length > 0, `missing ${k} passed`);
      assert.ok(
        found.some((f) => f.includes(k) || f.includes("clickhouse")),
        `${k}: ${found.join("; ")}`,
      );
    }
  });
});

describe("gitlab status: clickHouseEnabled", () => {
  const t0 = new Date("2026-01-01T00:00:00Z");
  const applied = (clickHouseEnabled: boolean | undefined): PassOutcome => ({
    kind: "applied",
    targetVersion: "10.4.0",
    chartVersion: "10.4.0",
    hooksRan: true,
    renderedKinds: ["apps/v1/Deployment"],
    workloads: { ready: ["Deployment gl/web"], notReady: [] },
    stepping: false,
    clickHouseEnabled,
  });

  it("publishes what the applied values say, true and false, and keeps it when a pass does not say", () => {
    const on = planStatus(undefined, 1, applied(true), t0).status;
    assert.equal(on.clickHouseEnabled, true);
    const off = planStatus(on, 2, applied(false), t0).status;
    assert.equal(off.clickHouseEnabled, false);
    assert.equal(planStatus(on, 2, applied(undefined), t0).status.clickHouseEnabled, true);
  });
});
