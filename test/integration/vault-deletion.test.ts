import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { OWNER_MARKER_KEY } from "../../src/targets/vault/planner.js";
import { FINALIZER } from "../../src/targets/vault/reconciler.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  applySeed,
  condition,
  getSeed,
  installVaultSeedCrd,
  type RunningTarget,
  rootKv,
  seed,
  setUpVaultAuth,
  startVaultTarget,
  waitForReason,
} from "../support/vault.js";

const gone = async (client: KubeClient, ns: string, name: string) =>
  eventually(
    async () => (isNotFound(await getSeed(client, ns, name).catch((e: unknown) => e)) ? true : undefined),
    15_000,
    `${name} to be deleted`,
  );

describe("VaultSeed deletion", () => {
  let client: KubeClient;
  let kv: KvClient;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
    kv = rootKv();
  });
  after(() => client.close());

  describe("with allowDelete off (the default)", () => {
    let ns: string;
    let target: RunningTarget;
    before(async () => {
      ns = await freshNamespace(client, "vs-del-off");
      await setUpVaultAuth(client, ns);
      target = await startVaultTarget(client, ns);
    });
    after(() => target.stop());

    it("Retain: deleting never blocks and never touches OpenBao", async () => {
      const path = `secret/${ns}/keep`;
      await applySeed(client, seed(ns, "keep", { path, data: { a: "<random:8>" } }));
      const o = await waitForReason(client, ns, "keep", "Reconciled");
      assert.deepEqual(o.metadata.finalizers ?? [], []);
      await client.delete(VAULTSEED, "keep", ns);
      await gone(client, ns, "keep");
      assert.equal((await kv.read(path)).exists, true);
    });

    it("Delete without the switch: Stalled with Forbidden, no finalizer, nothing written, path kept", async () => {
      const path = `secret/${ns}/want-delete`;
      await kv.write(path, { a: "pre" }, 0);
      await applySeed(
        client,
        seed(ns, "want-delete", { path, deletionPolicy: "Delete", data: { a: "<random:8>" } }),
      );
      const o = await waitForReason(client, ns, "want-delete", "Forbidden");
      assert.equal(condition(o, "Stalled")?.status, "True");
      assert.match(condition(o, "Stalled")!.message, /allowDelete/);
      assert.deepEqual(o.metadata.finalizers ?? [], []);
      await client.delete(VAULTSEED, "want-delete", ns);
      await gone(client, ns, "want-delete");
      const s = await kv.read(path);
      assert.deepEqual(s.data, { a: "pre" });
    });
  });

  describe("with allowDelete on", () => {
    let ns: string;
    let target: RunningTarget;
    before(async () => {
      ns = await freshNamespace(client, "vs-del-on");
      await setUpVaultAuth(client, ns);
      target = await startVaultTarget(client, ns, { allowDelete: true });
    });
    after(() => target.stop());

    it("Delete: adds a finalizer and removes the path with every version", async () => {
      const path = `secret/${ns}/temp`;
      await applySeed(
        client,
        seed(ns, "temp", { path, deletionPolicy: "Delete", data: { a: "<random:8>" } }),
      );
      const o = await waitForReason(client, ns, "temp", "Reconciled");
      assert.deepEqual(o.metadata.finalizers, [FINALIZER]);
      await client.delete(VAULTSEED, "temp", ns);
      await gone(client, ns, "temp");
      const s = await kv.read(path);
      assert.equal(s.exists, false);
      assert.equal(s.version, 0, "metadata delete removed every version");
    });

    it("Delete: a path without this object's marker is left in place, and deletion still completes", async () => {
      const path = `secret/${ns}/not-mine`;
      await applySeed(
        client,
        seed(ns, "not-mine", { path, deletionPolicy: "Delete", data: { a: "<random:8>" } }),
      );
      await waitForReason(client, ns, "not-mine", "Reconciled");
      await kv.writeMetadata(path, { [OWNER_MARKER_KEY]: "someone/else" });
      await client.delete(VAULTSEED, "not-mine", ns);
      await gone(client, ns, "not-mine");
      assert.equal((await kv.read(path)).exists, true);
    });

    it("Retain with allowDelete: no finalizer, path kept; switching Delete back to Retain drops the finalizer", async () => {
      const path = `secret/${ns}/switch`;
      await applySeed(
        client,
        seed(ns, "switch", { path, deletionPolicy: "Delete", data: { a: "<random:8>" } }),
      );
      await eventually(async () =>
        (await getSeed(client, ns, "switch")).metadata.finalizers?.includes(FINALIZER) ? true : undefined,
      );
      await applySeed(
        client,
        seed(ns, "switch", { path, deletionPolicy: "Retain", data: { a: "<random:8>" } }),
      );
      await eventually(async () =>
        ((await getSeed(client, ns, "switch")).metadata.finalizers ?? []).length === 0 ? true : undefined,
      );
      await client.delete(VAULTSEED, "switch", ns);
      await gone(client, ns, "switch");
      assert.equal((await kv.read(path)).exists, true);
    });
  });
});
