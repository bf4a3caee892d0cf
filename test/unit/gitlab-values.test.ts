import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GitLabCoreSpec } from "../../src/apis/gitlabcore.js";
import {
  type EffectiveValues,
  effectiveValues,
  hostsOf,
  MAX_DEPTH,
  type Values,
  valueAt,
} from "../../src/targets/gitlab/values/index.js";

const base = (extra: Partial<GitLabCoreSpec> = {}): GitLabCoreSpec => ({
  version: { type: "Static", version: "10.4.0" },
  hostname: "gitlab.example.com",
  ...extra,
});

const run = (
  spec: GitLabCoreSpec,
  chartVersion = "10.4.0",
  managerServiceAccount?: string,
): EffectiveValues =>
  effectiveValues({ name: "gitlab", namespace: "gitlab-system", spec, chartVersion, managerServiceAccount });

const values = (r: EffectiveValues): Values => {
  assert.ok(r.ok, `expected values, got ${JSON.stringify(r)}`);
  return r.values;
};

const errorsOf = (r: EffectiveValues) => {
  assert.ok(!r.ok, "expected errors");
  return r.errors;
};

describe("gitlab values: hosts from spec.hostname", () => {
  const domainOf = (h: string) => {
    const r = hostsOf(h);
    assert.ok(r.ok, `${h}: ${JSON.stringify(r)}`);
    return r.hosts;
  };

  it("strips the first label of a subdomain, and keeps an apex as its own domain", () => {
    assert.deepEqual(domainOf("gitlab.example.com"), {
      domain: "example.com",
      gitlab: "gitlab.example.com",
      registry: "registry.example.com",
      kas: "kas.example.com",
    });
    assert.equal(domainOf("example.com").domain, "example.com");
    assert.equal(domainOf("example.com").registry, "registry.example.com");
    // Multi-label public suffixes: stripping would leave co.uk.
    assert.equal(domainOf("example.co.uk").domain, "example.co.uk");
    assert.equal(domainOf("gitlab.example.co.uk").domain, "example.co.uk");
    assert.equal(domainOf("gitlab.team.example.com").domain, "team.example.com");
    // Private suffixes count: a name right under github.io is its registrant's apex.
    assert.equal(domainOf("me.github.io").domain, "me.github.io");
    // Punycode IDN is a name like any other.
    assert.equal(domainOf("gitlab.xn--mnchen-3ya.de").domain, "xn--mnchen-3ya.de");
  });

  it("refuses hostile host names with a message saying what is wrong", () => {
    const cases: [string, RegExp][] = [
      ["gitlab.münchen.de", /punycode form, gitlab\.xn--mnchen-3ya\.de/],
      ["gitlab.example.com.", /must not end with a dot/],
      ["10.0.0.1", /IP address/],
      ["::1", /IP address/],
      ["[2001:db8::1]", /IP address/],
      ["localhost", /single label/],
      ["co.uk", /public suffix/],
      ["com", /single label/],
      ["github.io", /public suffix/],
      ["Gitlab.Example.com", /lower case/],
      ["gitlab..example.com", /empty label/],
      ["-gitlab.example.com", /invalid label/],
      [`${"a".repeat(64)}.example.com`, /invalid label/],
      [`${"a.".repeat(130)}com`, /longer than 253/],
      ["gitlab.example.123", /numeric label/],
      ["", /host name/],
    ];
    for (const [host, message] of cases) {
      const r = hostsOf(host);
      assert.ok(!r.ok, `${host} was accepted`);
      assert.match(r.message, message, host);
    }
    assert.equal(hostsOf(42 as unknown as string).ok, false);
  });

  it("a bad hostname is an effective-values error naming spec.hostname", () => {
    const errors = errorsOf(run(base({ hostname: "co.uk" })));
    assert.deepEqual(
      errors.map((e) => e.field),
      ["spec.hostname"],
    );
  });
});

describe("gitlab values: derived layer", () => {
  it("a minimal spec: hosts, edition ee, Gateway API off, shared-secrets defaults, overrides", () => {
    const v = values(run(base(), "10.4.0", "platform-operator"));
    assert.deepEqual(v, {
      global: {
        hosts: {
          domain: "example.com",
          gitlab: { name: "gitlab.example.com" },
          registry: { name: "registry.example.com" },
          kas: { name: "kas.example.com" },
        },
        edition: "ee",
        gatewayApi: { enabled: false, installEnvoy: false },
      },
      "shared-secrets": {
        serviceAccount: { create: false, name: "platform-operator" },
        rbac: { create: false },
      },
      installCertmanager: false,
      "gitlab-runner": { install: false },
      "nginx-ingress": { enabled: false },
      haproxy: { install: false },
      traefik: { install: false },
    });
  });

  it("ce edition, license, PostgreSQL, Redis, object storage: Secrets named, never read", () => {
    const v = values(
      run(
        base({
          edition: "ce",
          license: { secretRef: { name: "lic", key: "license" } },
          postgresql: { host: "pg.db.svc", passwordSecretRef: { name: "pg", key: "password" } },
          redis: { host: "valkey.db.svc", passwordSecretRef: { name: "valkey", key: "pw" } },
          objectStorage: { connectionSecretRef: { name: "s3", key: "connection" } },
        }),
      ),
    );
    assert.equal(valueAt(v, "global.edition"), "ce");
    assert.deepEqual(valueAt(v, "global.gitlab.license"), { secret: "lic", key: "license" });
    assert.deepEqual(valueAt(v, "global.psql"), {
      host: "pg.db.svc",
      password: { secret: "pg", key: "password" },
    });
    assert.deepEqual(valueAt(v, "global.redis"), {
      host: "valkey.db.svc",
      auth: { enabled: true, secret: "valkey", key: "pw" },
    });
    assert.equal(valueAt(v, "global.minio.enabled"), false);
    assert.deepEqual(valueAt(v, "global.appConfig.object_store"), {
      enabled: true,
      connection: { secret: "s3", key: "connection" },
    });
    // Chart 10 bundles no PostgreSQL or Redis: nothing to switch off.
    assert.equal(valueAt(v, "postgresql"), undefined);
    assert.equal(valueAt(v, "redis"), undefined);
  });

  it("charts before 10 get their bundled PostgreSQL and Redis switched off", () => {
    const v = values(
      run(
        base({
          postgresql: { host: "pg", passwordSecretRef: { name: "pg", key: "password" } },
          redis: { host: "r", passwordSecretRef: { name: "r", key: "password" } },
        }),
        "9.11.2",
      ),
    );
    assert.equal(valueAt(v, "postgresql.install"), false);
    assert.equal(valueAt(v, "redis.install"), false);
  });

  it("OpenBao: both switches on, its own database with the chart defaults, no ServiceAccount or Role created", () => {
    const v = values(
      run(
        base({
          postgresql: { host: "pg", passwordSecretRef: { name: "gitlab-pg", key: "password" } },
          openbao: {
            postgresql: { host: "bao-pg.db.svc", passwordSecretRef: { name: "bao-pg", key: "password" } },
            serviceAccount: { name: "openbao" },
          },
        }),
      ),
    );
    assert.equal(valueAt(v, "global.openbao.enabled"), true);
    assert.equal(valueAt(v, "openbao.install"), true);
    assert.deepEqual(valueAt(v, "openbao.serviceAccount"), { create: false, name: "openbao" });
    assert.equal(valueAt(v, "openbao.role.create"), false);
    assert.deepEqual(valueAt(v, "openbao.config.storage.postgresql.connection"), {
      host: "bao-pg.db.svc",
      port: 5432,
      database: "openbao",
      username: "openbao",
      password: { secret: "bao-pg", key: "password" },
    });
    const custom = values(
      run(
        base({
          openbao: {
            postgresql: {
              host: "h",
              port: 6432,
              database: "bao",
              username: "bao_user",
              passwordSecretRef: { name: "s", key: "k" },
            },
          },
        }),
      ),
    );
    assert.equal(valueAt(custom, "openbao.config.storage.postgresql.connection.port"), 6432);
    assert.equal(valueAt(custom, "openbao.config.storage.postgresql.connection.username"), "bao_user");
    assert.equal(valueAt(custom, "openbao.serviceAccount.name"), undefined);
  });

  it("Gateway API modes: Envoy Gateway controller with its own class and a ClusterIssuer annotation", () => {
    const v = values(
      run(
        base({
          networking: {
            envoyGatewayController: {
              certManager: { issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" } },
            },
          },
        }),
      ),
    );
    assert.equal(valueAt(v, "global.gatewayApi.enabled"), true);
    assert.equal(valueAt(v, "global.gatewayApi.installEnvoy"), false, "the override still wins");
    assert.deepEqual(valueAt(v, "gatewayApiResources.class"), { enabled: true });
    assert.equal(valueAt(v, "global.gatewayApi.class.name"), "gitlab-system-gitlab-gitlab");
    assert.deepEqual(valueAt(v, "gatewayApiResources.gateway.annotations"), {
      "cert-manager.io/cluster-issuer": "letsencrypt",
    });
  });

  it("Gateway API modes: an existing GatewayClass, with an external issuer", () => {
    const v = values(
      run(
        base({
          networking: {
            gatewayClass: {
              name: "envoy-public",
              certManager: { issuerRef: { name: "pca", kind: "Issuer", group: "awspca.cert-manager.io" } },
            },
          },
        }),
      ),
    );
    assert.equal(valueAt(v, "gatewayApiResources.class.enabled"), false);
    assert.equal(valueAt(v, "global.gatewayApi.class.name"), "envoy-public");
    assert.deepEqual(valueAt(v, "gatewayApiResources.gateway.annotations"), {
      "cert-manager.io/issuer": "pca",
      "cert-manager.io/issuer-kind": "Issuer",
      "cert-manager.io/issuer-group": "awspca.cert-manager.io",
    });
  });

  it("Gateway API modes: an existing Gateway, in this namespace by default", () => {
    const v = values(run(base({ networking: { gateway: { name: "shared" } } }), "10.2.1"));
    assert.equal(valueAt(v, "global.gatewayApi.enabled"), true);
    assert.equal(valueAt(v, "gatewayApiResources.class.enabled"), false);
    assert.deepEqual(valueAt(v, "global.gatewayApi.gatewayRef"), {
      name: "shared",
      namespace: "gitlab-system",
    });
    const other = values(run(base({ networking: { gateway: { name: "shared", namespace: "infra" } } })));
    assert.equal(valueAt(other, "global.gatewayApi.gatewayRef.namespace"), "infra");
  });

  it("the Envoy and GatewayClass modes need chart 10.4.0 or later", () => {
    for (const [mode, networking] of [
      ["envoyGatewayController", { envoyGatewayController: {} }],
      ["gatewayClass", { gatewayClass: { name: "c" } }],
    ] as const) {
      const errors = errorsOf(run(base({ networking }), "10.3.4"));
      assert.equal(errors[0]?.field, `spec.networking.${mode}`);
      assert.match(errors[0]!.message, /needs chart 10\.4\.0 or later; the target chart is 10\.3\.4/);
      assert.ok(run(base({ networking }), "11.0.0").ok);
    }
  });

  it("two modes at once are refused (the CRD does too)", () => {
    const errors = errorsOf(
      run(base({ networking: { gateway: { name: "g" }, gatewayClass: { name: "c" } } as never })),
    );
    assert.equal(errors[0]?.field, "spec.networking");
  });

  it("an empty networking object is the same as none", () => {
    assert.equal(valueAt(values(run(base({ networking: {} }))), "global.gatewayApi.enabled"), false);
  });
});

describe("gitlab values: layers", () => {
  it("free-form values win over derived ones, and the overrides win over both", () => {
    const v = values(
      run(
        base({
          chart: {
            values: {
              global: {
                hosts: { domain: "other.org", https: false },
                edition: "ce",
                gatewayApi: { installEnvoy: true },
              },
              installCertmanager: true,
              "gitlab-runner": { install: true, rbac: { create: true } },
              gitlab: { webservice: { minReplicas: 2 } },
            },
          },
        }),
      ),
    );
    assert.equal(valueAt(v, "global.hosts.domain"), "other.org");
    assert.equal(valueAt(v, "global.hosts.https"), false);
    assert.equal(
      valueAt(v, "global.hosts.gitlab.name"),
      "gitlab.example.com",
      "siblings of a merged map stay",
    );
    assert.equal(valueAt(v, "global.edition"), "ce");
    assert.equal(valueAt(v, "gitlab.webservice.minReplicas"), 2);
    assert.equal(valueAt(v, "installCertmanager"), false);
    assert.equal(valueAt(v, "global.gatewayApi.installEnvoy"), false);
    assert.deepEqual(valueAt(v, "gitlab-runner"), { install: false, rbac: { create: true } });
  });

  it("lists replace, and null is kept so Helm drops the chart default too", () => {
    const v = values(
      run(
        base({
          chart: { values: { global: { edition: null }, list: [1, { a: 2 }], gitlab: { toolbox: null } } },
        }),
      ),
    );
    assert.equal(valueAt(v, "global.edition"), null);
    assert.deepEqual(valueAt(v, "list"), [1, { a: 2 }]);
    assert.equal(valueAt(v, "gitlab.toolbox"), null);
  });

  it("a non-map over a derived section is an error naming the field and what derives it", () => {
    const errors = errorsOf(run(base({ chart: { values: { global: { hosts: "example.org" } } } })));
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, "spec.chart.values.global.hosts");
    assert.match(
      errors[0]!.message,
      /must be a map, not a string: the operator derives global\.hosts from spec\.hostname/,
    );
  });

  it("a non-map where an override goes is an error naming the field, the value never echoed", () => {
    const errors = errorsOf(run(base({ chart: { values: { "gitlab-runner": "s3cr3t-value" } } })));
    assert.equal(errors[0]!.field, "spec.chart.values.gitlab-runner");
    assert.match(errors[0]!.message, /must be a map, not a string: the operator overrides set keys under it/);
    assert.ok(!JSON.stringify(errors).includes("s3cr3t-value"));
    const top = errorsOf(run(base({ chart: { values: { global: 7 } } })));
    assert.ok(top.every((e) => e.field === "spec.chart.values.global"));
  });

  it("a free-form map over a derived scalar wins, as free-form values do", () => {
    const v = values(run(base({ chart: { values: { global: { edition: { custom: true } } } } })));
    assert.deepEqual(valueAt(v, "global.edition"), { custom: true });
  });

  it("a non-map spec.chart.values is an error", () => {
    const errors = errorsOf(run(base({ chart: { values: ["a"] as never } })));
    assert.equal(errors[0]!.field, "spec.chart.values");
  });

  it("hostile keys stay plain keys: no prototype is touched", () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}');
    const v = values(run(base({ chart: { values: hostile } })));
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(v, "__proto__")?.value, { polluted: true });
  });

  it("values nested past the limit are an error, not a stack overflow", () => {
    let deep: Values = { leaf: true };
    for (let i = 0; i < MAX_DEPTH * 200; i++) deep = { n: deep };
    const errors = errorsOf(run(base({ chart: { values: deep } })));
    assert.equal(errors[0]!.field, "spec.chart.values");
    assert.match(errors[0]!.message, /deeper than 64/);
  });

  it("is pure: the same input gives equal values, and the input is not modified", () => {
    const spec = base({ chart: { values: { global: { hosts: { https: false } } } } });
    const before = structuredClone(spec);
    const a = values(run(spec));
    const b = values(run(spec));
    assert.deepEqual(a, b);
    assert.deepEqual(spec, before);
  });
});
