import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import type { KubeClient } from "../../src/runtime/client.js";
import { Manager } from "../../src/runtime/manager.js";
import { activeWorkers } from "../../src/runtime/metrics.js";
import type { KvBackend } from "../../src/targets/vault/reconciler.js";
import { vaultTarget } from "../../src/targets/vault/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { HoldingProxy } from "../support/holding-proxy.js";
import { eventually } from "../support/kube.js";
import { applySeed, seed, vaultSuite, waitForReason } from "../support/vault.js";

/** BaoHttp's own per-request timeout: without the abort, a stop would wait this long. */
const BACKEND_TIMEOUT_MS = 15_000;

/** The vault target through a holding proxy in front of OpenBao, with a deadline far beyond the backend timeout. */
async function startThroughProxy(client: KubeClient, ns: string) {
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
        allowHttp: true,
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
  // Only the abort can make stop() quicker than the backend's own timeout.
  const manager = new Manager({ target: "vault", client, log, namespaces: [ns], shutdownTimeoutMs: 60_000 });
  await def.setup(manager, config);
  await manager.start();
  return {
    proxy,
    logs,
    reads,
    manager,
    async close() {
      await manager.stop();
      await def.close?.();
      await proxy.close();
    },
  };
}

/** Reconciles running now in this process (every controller). */
async function busyWorkers(): Promise<number> {
  return (await activeWorkers.get()).values.reduce((n, v) => n + v.value, 0);
}

/** stop() while a reconcile waits on OpenBao: quick, the pass cancelled, nothing abandoned. */
async function stopPromptly(t: Awaited<ReturnType<typeof startThroughProxy>>, what: string): Promise<void> {
  const started = performance.now();
  await t.manager.stop();
  const took = performance.now() - started;
  process.stdout.write(`# stop with ${what} hanging: ${Math.round(took)} ms\n`);
  assert.ok(took < BACKEND_TIMEOUT_MS, `stop() took ${Math.round(took)} ms: it waited for the backend`);
  const text = t.logs.join("");
  assert.ok(text.includes("reconcile cancelled"), "the pass ended as cancelled");
  assert.ok(!text.includes("shutdown deadline"), "no reconcile had to be abandoned");
  assert.ok(!text.includes("BackendUnavailable"), "the abort was not reported as the backend being down");
}

describe("VaultSeed reconciles at shutdown", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    ({ client, ns } = await vaultSuite("vs-stop"));
  });
  after(() => client.close());

  it("an OpenBao call that hangs is aborted by the reconcile's signal, so stop() does not wait for it", async () => {
    const t = await startThroughProxy(client, ns);
    const path = `secret/${ns}/slow`;
    try {
      await applySeed(client, seed(ns, "slow", { path, data: { a: "<random:8>" } }));
      await waitForReason(client, ns, "slow", "Reconciled");
      // OpenBao goes silent; a spec change makes the next pass read the path and wait.
      t.proxy.hold("all");
      const before = t.reads.length;
      await applySeed(client, seed(ns, "slow", { path, data: { a: "<random:8>", b: "<random:8>" } }));
      await eventually(() => (t.reads.length > before ? true : undefined), 20_000, "the next pass to read");
      await stopPromptly(t, "an OpenBao read");
    } finally {
      await t.close();
    }
  });

  it("a login that hangs does not hold the pass either: the reconcile stops waiting for it", async () => {
    const t = await startThroughProxy(client, ns);
    try {
      // Silent before the first login: the first pass's read waits for a token that never comes.
      t.proxy.hold("all");
      await applySeed(
        client,
        seed(ns, "no-login", { path: `secret/${ns}/no-login`, data: { a: "<random:8>" } }),
      );
      // The pass is running (a worker busy) and waiting on OpenBao (a connection held): its first
      // call, the mount lookup or the read, waits for the login.
      await eventually(
        async () => ((await busyWorkers()) > 0 && t.proxy.openConnections > 0 ? true : undefined),
        20_000,
        "the pass to wait on its login",
      );
      await stopPromptly(t, "an OpenBao login");
    } finally {
      await t.close();
    }
  });
});
