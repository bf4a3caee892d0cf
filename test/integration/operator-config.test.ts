import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import { LEASE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { grantClusterWide, serviceAccountToken } from "../support/rbac.js";
import { applySeed, seed, type VaultSuite, vaultSuite, waitForReason } from "../support/vault.js";

const main = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

describe("platform-operator run: configuration checks, secure metrics, redacted logs", () => {
  let suite: VaultSuite;
  let client: KubeClient;
  let ns: string;
  let dir: string;

  before(async () => {
    suite = await vaultSuite("op-config");
    ({ client, ns } = suite);
    dir = mkdtempSync(join(tmpdir(), "op-config-"));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    client.close();
  });

  const run = (name: string, config: string) => {
    const file = join(dir, name);
    writeFileSync(file, config);
    return spawnSync(
      process.execPath,
      [main, "run", "--config", file, "--kubeconfig", sharedEnv().kubeconfigPath],
      {
        encoding: "utf8",
        timeout: 30_000,
      },
    );
  };
  const backend = (extra = "") => `    backend:
      address: ${sharedEnv().bao.addr}
      allowHttp: true${extra}
      auth:
        kubernetes: { mount: k8s-${ns}, role: ohmlab-controller, serviceAccount: { namespace: ${ns}, name: ohmlab-controller } }
`;

  it("a misspelt key stops the start, naming it, before anything is written to the cluster", async () => {
    const r = run(
      "typo.yaml",
      `leaderElection: { enabled: true, namespace: ${ns} }
targets:
  vault:
    namespaces: [${ns}]
    observeonly: true
${backend()}`,
    );
    assert.equal(r.status, 2, r.stderr);
    assert.equal(
      r.stderr.trim(),
      "platform-operator: targets.vault.observeonly: unknown key (did you mean observeOnly?)",
    );
    const leases = await client.list(LEASE, { namespace: ns });
    assert.equal(leases.items.length, 0, "no Lease: the operator never started");
  });

  it("refuses an http:// backend without allowHttp, and a plain static token", () => {
    let r = run(
      "http.yaml",
      `targets:\n  vault:\n    backend:\n      address: http://127.0.0.1:8200\n      auth: { developmentToken: x }\n`,
    );
    assert.equal(r.status, 2);
    assert.match(r.stderr, /targets\.vault\.backend\.address: http:\/\/ would send .*allowHttp: true/);
    r = run(
      "token.yaml",
      `targets:\n  vault:\n    backend:\n      address: https://127.0.0.1:8200\n      auth: { token: s.abcdef }\n`,
    );
    assert.equal(r.status, 2);
    assert.match(r.stderr, /targets\.vault\.backend\.auth\.token: static-token auth is for development only/);
    assert.ok(!r.stderr.includes("s.abcdef"), "the token is not echoed");
  });

  describe("a running operator with metrics behind TokenReview/SAR and a development token", () => {
    let op: RunningOperator;
    const logs: string[] = [];
    let scraper: string;
    const rootToken = sharedEnv().bao.rootToken;

    before(async () => {
      scraper = await serviceAccountToken(client, ns, "scraper");
      await grantClusterWide(client, ns, "scraper", `${ns}-metrics-reader`, [
        { nonResourceURLs: ["/metrics"], verbs: ["get"] },
      ]);
      process.env["OP_CONFIG_TEST_TOKEN"] = rootToken;
      const file = join(dir, "operator.yaml");
      writeFileSync(
        file,
        `leaderElection: { enabled: false }
logLevel: debug
probes: { port: 0, host: 127.0.0.1, stuckAfter: 5m }
metrics: { port: 0, host: 127.0.0.1, secure: true }
targets:
  vault:
    namespaces: [${ns}]
    resyncInterval: 2s
    backend:
      address: ${sharedEnv().bao.addr}
      allowHttp: true
      auth: { developmentToken: "\${OP_CONFIG_TEST_TOKEN}" }
`,
      );
      op = await startOperator({
        configPath: file,
        kubeconfig: sharedEnv().kubeconfigPath,
        logStream: new Writable({
          write(c, _e, cb) {
            logs.push(String(c));
            cb();
          },
        }),
      });
    });
    after(async () => {
      await op.stop();
    });

    it("reconciles with the development token, serves /metrics only to an allowed caller, and logs no secret", async () => {
      await applySeed(
        client,
        seed(ns, "dev-token", { path: `secret/${ns}/dev-token`, data: { pw: "<random:24>" } }),
      );
      await waitForReason(client, ns, "dev-token", "Reconciled");
      const probes = `http://127.0.0.1:${op.probePort}`;
      const metrics = `http://127.0.0.1:${op.metricsPort}/metrics`;
      assert.equal((await fetch(`${probes}/healthz`)).status, 200);
      assert.equal((await fetch(`${probes}/metrics`)).status, 404, "/metrics moved to its own server");
      assert.equal((await fetch(metrics)).status, 401);
      const ok = await fetch(metrics, { headers: { Authorization: `Bearer ${scraper}` } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /controller_runtime_reconcile_total\{controller="vaultseed",result="/);

      const stored = await suite.kv.read(`secret/${ns}/dev-token`);
      const value = (stored.data as Record<string, string>)["pw"]!;
      assert.equal(value.length, 24);
      const all = logs.join("");
      assert.match(all, /"msg":"wrote path"/, "the logs were captured");
      for (const [what, secret] of [
        ["the development token", rootToken],
        ["the generated value", value],
        ["the scraper's token", scraper],
      ] as const) {
        assert.ok(!all.includes(secret), `${what} reached the log`);
      }
    });
  });
});
