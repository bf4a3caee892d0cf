import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import type { KvBackend } from "../../src/targets/vault/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  applySeed,
  getSeed,
  installVaultSeedCrd,
  rootKv,
  seed,
  setUpVaultAuth,
  startVaultTarget,
  waitForReason,
} from "../support/vault.js";

/**
 * A pass gives back its OpenBao slot before writing its status (reconciler.ts): the next object's
 * OpenBao requests do not wait for an API server round trip, and OpenBao still never sees more
 * passes at once than `concurrency`.
 */
describe("VaultSeed status writes overlap the next pass's OpenBao requests", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
    ns = await freshNamespace(client, "vs-overlap");
    await setUpVaultAuth(client, ns);
    kv = rootKv();
  });
  after(() => client.close());

  it("with concurrency 1, a second object is seeded while the first one's status write is held", async () => {
    // The first object's status write waits until the test lets it go; everything else is real.
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let held!: () => void;
    const holding = new Promise<void>((r) => {
      held = r;
    });
    let holds = 0;
    const holdingClient = new Proxy(client, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (prop === "applyStatus") {
          const applyStatus = v as KubeClient["applyStatus"];
          return async (...args: Parameters<KubeClient["applyStatus"]>) => {
            if (args[1].metadata.name === "first" && holds++ === 0) {
              held();
              await released;
            }
            return applyStatus.apply(target, args);
          };
        }
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    // The most OpenBao requests in flight at once, to hold the slots to `concurrency`.
    let inFlight = 0;
    let maxInFlight = 0;
    const counted =
      <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          return await f(...a);
        } finally {
          inFlight--;
        }
      };
    const wrap = (inner: KvBackend): KvBackend => ({
      read: counted((p: string, s?: AbortSignal) => inner.read(p, s)),
      write: counted((p: string, d: Record<string, unknown>, cas: number, s?: AbortSignal) =>
        inner.write(p, d, cas, s),
      ),
      writeMetadata: counted((p: string, m: Record<string, string>, s?: AbortSignal) =>
        inner.writeMetadata(p, m, s),
      ),
      deleteAll: counted((p: string, s?: AbortSignal) => inner.deleteAll(p, s)),
    });
    const target = await startVaultTarget(holdingClient, ns, { concurrency: 1, hooks: { wrapKv: wrap } });
    try {
      await applySeed(client, seed(ns, "first", { path: `secret/${ns}/first`, data: { a: "<random:8>" } }));
      await eventually(() => holding.then(() => true), 60_000, "the first object's status write");
      assert.ok((await kv.read(`secret/${ns}/first`)).exists, "OpenBao is written before the status");

      await applySeed(client, seed(ns, "second", { path: `secret/${ns}/second`, data: { b: "<random:8>" } }));
      // Before: the one worker sat in the first object's status write, and this never came.
      await eventually(
        async () => (await kv.read(`secret/${ns}/second`)).exists || undefined,
        60_000,
        "the second path written while the first status write is held",
      );
      assert.equal(
        (await getSeed(client, ns, "first")).status?.managedKeys,
        undefined,
        "the first status is still held",
      );

      release();
      await waitForReason(client, ns, "first", "Reconciled", 60_000);
      await waitForReason(client, ns, "second", "Reconciled", 60_000);
      assert.deepEqual((await getSeed(client, ns, "first")).status?.managedKeys, ["a"]);
      assert.deepEqual((await getSeed(client, ns, "second")).status?.managedKeys, ["b"]);
      assert.equal(maxInFlight, 1, "OpenBao never saw more than concurrency (1) requests at once");
    } finally {
      release();
      await target.stop();
    }
  });
});
