import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import type { KubeClient } from "../../src/runtime/client.js";
import { Manager } from "../../src/runtime/manager.js";
import type { KvBackend } from "../../src/targets/vault/reconciler.js";
import { vaultTarget } from "../../src/targets/vault/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { HoldingProxy } from "../support/holding-proxy.js";
import { eventually } from "../support/kube.js";
import { applySeed, seed, vaultSuite, waitForReason } from "../support/vault.js";

/** BaoHttp's own per-request timeout: without the abort, a stop would wait this long. */
const BACKEND_TIMEOUT_MS = 15_000;

describe("VaultSeed reconciles at shutdown", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    ({ client, ns } = await vaultSuite("vs-stop"));
  });
  after(() => client.close());

  it("an OpenBao call that hangs is aborted by the reconcile's signal, so stop() does not wait for it", async () => {
    const bao = new URL(sharedEnv().bao.addr);
    const proxy = await HoldingProxy.start({ host: bao.hostname, port: Number(bao.port) });
    const logs: string[] = [];
    const log = pino(
      { level: "debug" },
      new Writable({
        write(c, _e, cb) {
          logs.push(String(c));
          cb();
        },
      }),
    );
    const path = `secret/${ns}/slow`;
    const reads: string[] = [];
    const def = vaultTarget({
      wrapKv: (inner: KvBackend): KvBackend => ({
        read: (p, s) => {
          reads.push(p);
          return inner.read(p, s);
        },
        write: (p, d, c, s) => inner.write(p, d, c, s),
        writeMetadata: (p, m, s) => inner.writeMetadata(p, m, s),
        deleteAll: (p, s) => inner.deleteAll(p, s),
      }),
    });
    const config = def.parseConfig(
      {
        resyncInterval: "10m",
        backend: {
          address: `http://127.0.0.1:${proxy.port}`,
          auth: {
            kubernetes: {
              mount: `k8s-${ns}`,
              role: "ohmlab-controller",
              audience: "vault",
              serviceAccount: { namespace: ns, name: "ohmlab-controller" },
            },
          },
        },
      },
      "targets.vault",
    );
    // A deadline far beyond the backend timeout, so only the abort can make stop() quick.
    const manager = new Manager({
      target: "vault",
      client,
      log,
      namespaces: [ns],
      shutdownTimeoutMs: 60_000,
    });
    await def.setup(manager, config);
    await manager.start();
    try {
      await applySeed(client, seed(ns, "slow", { path, data: { a: "<random:8>" } }));
      await waitForReason(client, ns, "slow", "Reconciled");
      // OpenBao goes silent; a spec change makes the next pass read the path and wait.
      proxy.hold("all");
      const before = reads.length;
      await applySeed(client, seed(ns, "slow", { path, data: { a: "<random:8>", b: "<random:8>" } }));
      await eventually(() => (reads.length > before ? true : undefined), 20_000, "the next pass to read");

      const started = performance.now();
      await manager.stop();
      const took = performance.now() - started;
      process.stdout.write(`# stop with an OpenBao read hanging: ${Math.round(took)} ms\n`);
      assert.ok(took < BACKEND_TIMEOUT_MS, `stop() took ${Math.round(took)} ms: it waited for the backend`);
      const text = logs.join("");
      assert.ok(text.includes("reconcile cancelled"), "the pass ended as cancelled");
      assert.ok(!text.includes("shutdown deadline"), "no reconcile had to be abandoned");
      assert.ok(!text.includes("BackendUnavailable"), "the abort was not reported as the backend being down");
    } finally {
      await manager.stop();
      await def.close?.();
      await proxy.close();
    }
  });
});
