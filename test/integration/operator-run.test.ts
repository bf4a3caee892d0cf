import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import { LEASE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { eventually } from "../support/kube.js";
import { applySeed, seed, vaultSuite, waitForReason } from "../support/vault.js";
import { writeVaultRunConfig } from "../support/vault-run-config.js";

type Lease = KubeObject & { spec?: { holderIdentity?: string | null } };

describe("platform-operator run (the real entry point)", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningOperator;
  const logs: string[] = [];

  before(async () => {
    ({ client, ns } = await vaultSuite("op-run"));
    const config = writeVaultRunConfig(ns, "op-run", "OP_RUN_TEST_BAO");
    const { Writable } = await import("node:stream");
    op = await startOperator({
      configPath: config,
      kubeconfig: sharedEnv().kubeconfigPath,
      logStream: new Writable({
        write(c, _e, cb) {
          logs.push(String(c));
          cb();
        },
      }),
    });
  });
  after(() => client.close());

  it("reconciles, serves probes and the conventional metrics, and holds its target's Lease", async () => {
    await applySeed(client, seed(ns, "via-run", { path: `secret/${ns}/via-run`, data: { a: "<random:8>" } }));
    await waitForReason(client, ns, "via-run", "Reconciled");
    const base = `http://127.0.0.1:${op.probePort}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'controller_runtime_reconcile_total{controller="vaultseed"',
      'controller_runtime_reconcile_time_seconds_count{controller="vaultseed"}',
      'workqueue_depth{name="vaultseed"}',
      'workqueue_adds_total{name="vaultseed"}',
      "workqueue_retries_total",
      "rest_client_requests_total{",
      'leader_election_master_status{name="platform-operator-vault"} 1',
      'ohmlab_backend_requests_total{target="vault",operation="read",outcome="',
      'ohmlab_writes_total{target="vault",action="create-path"}',
    ]) {
      assert.ok(metrics.includes(name), `metrics lack ${name}`);
    }
    const lease = await client.get<Lease>(LEASE, "platform-operator-vault", ns);
    assert.equal(lease.spec?.holderIdentity, op.managers[0]!.identity);
    const lines = logs
      .join("")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(
      lines.some((l) => l["msg"] === "wrote path" && l["object"] === `${ns}/via-run`),
      "JSON logs carry the object",
    );
  });

  it("stops gracefully: the Lease is released and the probe port closes", async () => {
    await op.stop();
    const lease = await client.get<Lease>(LEASE, "platform-operator-vault", ns);
    assert.ok(!lease.spec?.holderIdentity, "released");
    await eventually(
      () =>
        fetch(`http://127.0.0.1:${op.probePort}/healthz`).then(
          () => undefined,
          () => true,
        ),
      5000,
      "the probe server to close",
    );
  });
});
