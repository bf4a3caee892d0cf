import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { FINALIZER, type KvBackend } from "../../src/targets/vault/reconciler.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { eventually } from "../support/kube.js";
import { applySeed, getSeed, seed, startVaultTarget, vaultSuite, waitForReason } from "../support/vault.js";

describe("VaultSeed finalizer removal that hits a conflict", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;

  before(async () => {
    ({ client, ns, kv } = await vaultSuite("vs-fin"));
  });
  after(() => client.close());

  it("requeues and completes the deletion instead of leaving the object Terminating", async () => {
    const name = "contested";
    const path = `secret/${ns}/${name}`;
    let edits = 0;
    // While the controller deletes the path, someone edits the object (a label: no new generation,
    // no finalizer change, so the edit itself enqueues nothing). The copy the controller read is
    // now stale and its finalizer patch, which carries that resourceVersion, gets a real 409.
    const wrapKv = (inner: KvBackend): KvBackend => ({
      read: (p, s) => inner.read(p, s),
      write: (p, d, c, s) => inner.write(p, d, c, s),
      writeMetadata: (p, m, s) => inner.writeMetadata(p, m, s),
      async deleteAll(p, s) {
        if (p === path && edits === 0) {
          edits++;
          await client.mergePatch(VAULTSEED, name, ns, { metadata: { labels: { edited: "during-delete" } } });
        }
        return inner.deleteAll(p, s);
      },
    });
    // A long resync, so the only thing that can bring the key back within the test is the
    // requeue after the conflict.
    const target = await startVaultTarget(client, ns, {
      allowDelete: true,
      resyncInterval: "10m",
      hooks: { wrapKv },
    });
    try {
      await applySeed(client, seed(ns, name, { path, deletionPolicy: "Delete", data: { a: "<random:8>" } }));
      const o = await waitForReason(client, ns, name, "Reconciled");
      assert.deepEqual(o.metadata.finalizers, [FINALIZER]);
      await client.delete(VAULTSEED, name, ns);
      await eventually(
        async () => (isNotFound(await getSeed(client, ns, name).catch((e: unknown) => e)) ? true : undefined),
        30_000,
        `${name} to be deleted after the conflict`,
      );
      assert.equal(edits, 1, "the concurrent edit happened");
      assert.ok(
        target.logs.some((l) => l.includes("reconcile failed") && /modified|conflict/i.test(l)),
        "the finalizer patch really conflicted (and was retried)",
      );
      assert.equal((await kv.read(path)).exists, false, "the path was deleted");
    } finally {
      await target.stop();
    }
  });
});
