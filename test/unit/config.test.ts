import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProcessConfig } from "../../src/cli/config.js";
import { ConfigError } from "../../src/runtime/target.js";
import { parseVaultConfig } from "../../src/targets/vault/config.js";

/** Asserts that `f` throws a ConfigError naming `field` whose text matches `problem`. */
function refuses(f: () => unknown, field: string, problem: RegExp): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof ConfigError, `not a ConfigError: ${String(e)}`);
    assert.equal(e.field, field);
    assert.match(e.message, problem);
    return true;
  });
}

const kubeAuth = { kubernetes: { role: "r", tokenFile: "/t" } };
const vault = (extra: Record<string, unknown>, backend: Record<string, unknown> = {}) => ({
  backend: { address: "https://bao.example:8200", auth: kubeAuth, ...backend },
  ...extra,
});

describe("operator configuration: unknown keys", () => {
  it("names a misspelt key of the root and of each process section, with a hint", () => {
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, logleve: "info" }),
      "logleve",
      /unknown key.*known keys: .*logLevel/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, leaderElection: { enable: false } }),
      "leaderElection.enable",
      /unknown key/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, probes: { Port: 1 } }),
      "probes.Port",
      /did you mean port\?/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, metrics: { secur: false } }),
      "metrics.secur",
      /unknown key/,
    );
  });

  it("a misspelt observeOnly in a target section stops the start instead of leaving writes on", () => {
    refuses(
      () => parseVaultConfig(vault({ observeonly: true }), "targets.vault"),
      "targets.vault.observeonly",
      /unknown key \(did you mean observeOnly\?\)/,
    );
    assert.equal(parseVaultConfig(vault({ observeOnly: true }), "targets.vault").observeOnly, true);
  });

  it("refuses unknown keys at every depth of the vault section", () => {
    refuses(
      () => parseVaultConfig(vault({}, { cafile: "/x" }), "targets.vault"),
      "targets.vault.backend.cafile",
      /did you mean caFile\?/,
    );
    refuses(
      () =>
        parseVaultConfig(
          vault({}, { auth: { kubernetes: { role: "r", tokenFile: "/t", audiance: "v" } } }),
          "targets.vault",
        ),
      "targets.vault.backend.auth.kubernetes.audiance",
      /unknown key/,
    );
    refuses(
      () =>
        parseVaultConfig(
          vault(
            {},
            { auth: { kubernetes: { role: "r", serviceAccount: { namespace: "n", name: "s", nam: "x" } } } },
          ),
          "targets.vault",
        ),
      "targets.vault.backend.auth.kubernetes.serviceAccount.nam",
      /unknown key/,
    );
    refuses(
      () =>
        parseVaultConfig(vault({}, { auth: { kubernetes: kubeAuth.kubernetes, ldap: {} } }), "targets.vault"),
      "targets.vault.backend.auth.ldap",
      /unknown key/,
    );
  });

  it("takes the runner's namespaces out of a target section and checks them", () => {
    const c = parseProcessConfig({ targets: { vault: { namespaces: ["a", "b"], observeOnly: true } } });
    assert.deepEqual(c.targets.get("vault"), { namespaces: ["a", "b"], section: { observeOnly: true } });
    refuses(
      () => parseProcessConfig({ targets: { vault: { namespaces: "a" } } }),
      "targets.vault.namespaces",
      /list of non-empty strings/,
    );
  });

  it("speaks HTTP/2 and chooses the watch scope unless told otherwise, and checks both", () => {
    const client = { http2: false, watchScope: "cluster", clusterWatchFrom: 3 };
    assert.deepEqual(parseProcessConfig({ targets: { vault: {} }, client }).client, client);
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { http2: "yes" } }),
      "client.http2",
      /true or false|boolean/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { watchScope: "everywhere" } }),
      "client.watchScope",
      /auto, namespaces, cluster/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { clusterWatchFrom: 0 } }),
      "client.clusterWatchFrom",
      /whole number of at least 1/,
    );
  });

  it("sets no client-side rate limit unless client.qps asks for one, and checks it", () => {
    const defaults = { http2: true, watchScope: "auto" };
    assert.deepEqual(parseProcessConfig({ targets: { vault: {} } }).client, defaults);
    assert.deepEqual(parseProcessConfig({ targets: { vault: {} }, client: { qps: 20, burst: 30 } }).client, {
      ...defaults,
      rateLimit: { qps: 20, burst: 30 },
    });
    assert.deepEqual(parseProcessConfig({ targets: { vault: {} }, client: { qps: 10 } }).client, {
      ...defaults,
      rateLimit: { qps: 10, burst: 15 },
    });
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { qps: 0 } }),
      "client.qps",
      /above 0/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { burst: 3 } }),
      "client.qps",
      /above 0/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { qps: 5, burst: 0.5 } }),
      "client.burst",
      /whole number/,
    );
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, client: { qbs: 5 } }),
      "client.qbs",
      /unknown key/,
    );
  });

  it("reads the probe and metrics addresses and the liveness threshold", () => {
    const c = parseProcessConfig({
      targets: { vault: {} },
      probes: { port: 9000, host: "127.0.0.1", stuckAfter: "90s" },
      metrics: { port: 9443, host: "127.0.0.2" },
    });
    assert.deepEqual(c.probes, { port: 9000, host: "127.0.0.1", stuckAfterMs: 90_000 });
    assert.equal(
      parseProcessConfig({ targets: { vault: {} } }).probes.stuckAfterMs,
      300_000,
      "5m by default",
    );
    assert.deepEqual(c.metrics, { port: 9443, host: "127.0.0.2", secure: true }, "secure by default");
    assert.equal(parseProcessConfig({ targets: { vault: {} } }).metrics, undefined);
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, metrics: { certFile: "/tls.crt" } }),
      "metrics",
      /certFile and keyFile together/,
    );
    assert.deepEqual(
      parseProcessConfig({
        targets: { vault: {} },
        metrics: { secure: false, certFile: "/c", keyFile: "/k" },
      }).metrics,
      { port: 8443, host: "0.0.0.0", secure: false, certFile: "/c", keyFile: "/k" },
    );
    // The chart's metrics.certificate=operator and metrics.enabled=false.
    const metricsOf = (metrics: Record<string, unknown>) =>
      parseProcessConfig({ targets: { vault: {} }, metrics }).metrics;
    assert.equal(metricsOf({ selfSigned: true })?.selfSigned, true);
    assert.equal(metricsOf({})?.selfSigned, undefined);
    refuses(
      () => metricsOf({ selfSigned: true, certFile: "/c", keyFile: "/k" }),
      "metrics.selfSigned",
      /excludes certFile and keyFile/,
    );
    assert.equal(metricsOf({ enabled: false })?.enabled, false);
    assert.equal(metricsOf({ enabled: true })?.enabled, undefined, "on unless it says off");
    refuses(() => metricsOf({ enabled: "no" }), "metrics.enabled", /./);
    refuses(
      () => parseProcessConfig({ targets: { vault: {} }, probes: { stuckAfter: "soon" } }),
      "probes.stuckAfter",
      /duration/,
    );
  });
});

describe("operator configuration: backend transport and credentials", () => {
  it("refuses http:// unless backend.allowHttp says so", () => {
    refuses(
      () => parseVaultConfig(vault({}, { address: "http://bao:8200" }), "targets.vault"),
      "targets.vault.backend.address",
      /http:\/\/ would send .* unencrypted.*allowHttp: true/,
    );
    const c = parseVaultConfig(vault({}, { address: "http://bao:8200", allowHttp: true }), "targets.vault");
    assert.equal(c.backend.address, "http://bao:8200");
    refuses(
      () => parseVaultConfig(vault({}, { address: "http://bao:8200", allowHttp: "yes" }), "targets.vault"),
      "targets.vault.backend.allowHttp",
      /true or false/,
    );
  });

  it("accepts a static token only under developmentToken, and never echoes it", () => {
    const secret = "s.static-token-value-123";
    assert.throws(
      () => parseVaultConfig(vault({}, { auth: { token: secret } }), "targets.vault"),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(e.field, "targets.vault.backend.auth.token");
        assert.match(e.message, /development only.*developmentToken/);
        assert.ok(!e.message.includes(secret), "the token is not in the error");
        return true;
      },
    );
    const c = parseVaultConfig(vault({}, { auth: { developmentToken: secret } }), "targets.vault");
    assert.deepEqual(c.backend.auth, { kind: "token", token: secret });
    refuses(
      () =>
        parseVaultConfig(
          vault({}, { auth: { developmentToken: secret, kubernetes: kubeAuth.kubernetes } }),
          "targets.vault",
        ),
      "targets.vault.backend.auth",
      /either kubernetes or developmentToken/,
    );
  });
});
