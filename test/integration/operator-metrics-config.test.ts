import assert from "node:assert/strict";
import type { X509Certificate } from "node:crypto";
import { request as httpsRequest } from "node:https";
import { after, describe, it } from "node:test";
import type { TLSSocket } from "node:tls";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import { LEASE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { applySeed, seed, vaultSuite, waitForReason } from "../support/vault.js";
import { writeVaultRunConfig } from "../support/vault-run-config.js";

// What the chart's leaderElection.enabled, metrics.enabled and metrics.certificate=operator write
// into the configuration file, read by the real entry point: no Lease without leader election,
// /metrics nowhere when off, and HTTPS with a certificate made at start when selfSigned.

const quiet = async () => {
  const { Writable } = await import("node:stream");
  return new Writable({ write: (_c, _e, cb) => cb() });
};

/** The vault target's run configuration with `head` (leader election, metrics) as its top lines. */
const configFile = (ns: string, head: string) =>
  writeVaultRunConfig(ns, "op-metrics", "OP_METRICS_TEST_BAO", { head });

/** GET over TLS without verifying (the certificate is self-signed): status and the peer certificate. */
function getTls(port: number): Promise<{ status: number; cert: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port, path: "/metrics", rejectUnauthorized: false },
      (res) => {
        const raw = (res.socket as TLSSocket).getPeerX509Certificate();
        res.resume();
        res.on("end", () =>
          raw
            ? resolve({ status: res.statusCode ?? 0, cert: raw })
            : reject(new Error("no peer certificate")),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("the operator's metrics and leader election settings, as the chart writes them", () => {
  let client: KubeClient;
  const running: RunningOperator[] = [];
  after(async () => {
    for (const op of running) await op.stop();
    client?.close();
  });

  it("leaderElection off and metrics off: reconciles without a Lease, and /metrics is served nowhere", async () => {
    let ns: string;
    ({ client, ns } = await vaultSuite("op-metrics-off"));
    const op = await startOperator({
      configPath: configFile(
        ns,
        `leaderElection: { enabled: false, namespace: ${ns}, leaseName: platform-operator }\nmetrics: { enabled: false }`,
      ),
      kubeconfig: sharedEnv().kubeconfigPath,
      logStream: await quiet(),
    });
    running.push(op);
    await applySeed(
      client,
      seed(ns, "no-lease", { path: `secret/${ns}/no-lease`, data: { a: "<random:8>" } }),
    );
    await waitForReason(client, ns, "no-lease", "Reconciled");
    await assert.rejects(client.get(LEASE, "platform-operator-vault", ns), (e) => isNotFound(e), "no Lease");
    assert.equal(op.metricsPort, undefined, "no metrics server");
    const base = `http://127.0.0.1:${op.probePort}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/metrics`)).status, 404, "not on the probe port either");
  });

  it("metrics.selfSigned: HTTPS with a certificate the process made at start, valid now", async () => {
    const { ns } = await vaultSuite("op-metrics-tls");
    const op = await startOperator({
      configPath: configFile(
        ns,
        `leaderElection: { enabled: true, namespace: ${ns}, leaseName: platform-operator }\nmetrics: { port: 0, host: 127.0.0.1, secure: false, selfSigned: true }`,
      ),
      kubeconfig: sharedEnv().kubeconfigPath,
      logStream: await quiet(),
    });
    running.push(op);
    assert.ok(op.metricsPort);
    const { status, cert } = await getTls(op.metricsPort);
    assert.equal(status, 200);
    assert.ok(Date.parse(cert.validFrom) <= Date.now() && Date.now() < Date.parse(cert.validTo));
    assert.match(cert.issuer, /platform-operator metrics/);
    // Plain HTTP on the same port is not answered with metrics.
    const plain = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`).then(
      (r) => r.status,
      () => "refused",
    );
    assert.notEqual(plain, 200);
  });
});
