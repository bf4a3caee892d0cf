import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { ROTATION_TOKEN_KEY } from "../../src/targets/vault/planner.js";
import { baoCall, type DevOpenBao, startDevOpenBao } from "../../src/testenv/openbao.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  applySeed,
  condition,
  getSeed,
  installVaultSeedCrd,
  readCounter,
  rootKv,
  seed,
  setUpVaultAuth,
  startVaultTarget,
  waitForReason,
} from "../support/vault.js";

/** These tests seal, stop and re-police an OpenBao, so they get one of their own. */
describe("VaultSeed when OpenBao refuses or goes away", () => {
  let client: KubeClient;
  let bao: DevOpenBao;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
    bao = await startDevOpenBao();
  });
  after(async () => {
    await bao.stop();
    client.close();
  });

  it("reports BackendUnavailable while OpenBao is sealed or down, and recovers without a restart", async () => {
    const ns = await freshNamespace(client, "vs-down");
    await setUpVaultAuth(client, ns, bao.addr, bao.rootToken);
    const kv = rootKv(bao.addr, bao.rootToken);
    const target = await startVaultTarget(client, ns, { address: bao.addr });
    try {
      await applySeed(client, seed(ns, "s", { path: `secret/${ns}/s`, data: { a: "<random:8>" } }));
      await waitForReason(client, ns, "s", "Reconciled");

      await bao.seal();
      await applySeed(
        client,
        seed(ns, "s", { path: `secret/${ns}/s`, data: { a: "<random:8>", b: "<random:8>" } }),
      );
      const sealed = await waitForReason(client, ns, "s", "BackendUnavailable");
      assert.equal(condition(sealed, "Reconciling")?.status, "True");
      assert.equal(condition(sealed, "Stalled"), undefined);
      await bao.unseal();
      await waitForReason(client, ns, "s", "Reconciled", 30_000);
      assert.ok(((await kv.read(`secret/${ns}/s`)).data as Record<string, string>)["b"]);

      // Killed: connections are refused. Dev mode forgets everything on restart, so the auth
      // configuration is set up again; the controller seeds the path anew by itself.
      process.kill(bao.pid()!, "SIGKILL");
      await eventually(() => (bao.pid() === undefined ? true : undefined), 10_000, "OpenBao to die");
      await applySeed(
        client,
        seed(ns, "s", {
          path: `secret/${ns}/s`,
          data: { a: "<random:8>", b: "<random:8>", c: "<random:8>" },
        }),
      );
      const down = await waitForReason(client, ns, "s", "BackendUnavailable");
      assert.match(condition(down, "Ready")!.message, /unreachable/);
      await bao.restart();
      await setUpVaultAuth(client, ns, bao.addr, bao.rootToken);
      await waitForReason(client, ns, "s", "Reconciled", 40_000);
      assert.deepEqual(Object.keys((await kv.read(`secret/${ns}/s`)).data).sort(), ["a", "b", "c"]);
    } finally {
      await target.stop();
    }
  });

  it("reports Forbidden with OpenBao's reason when the role does not accept the token's audience", async () => {
    const ns = await freshNamespace(client, "vs-aud");
    const { mount } = await setUpVaultAuth(client, ns, bao.addr, bao.rootToken);
    await baoCall(bao.addr, bao.rootToken, "POST", `auth/${mount}/role/strict`, {
      bound_service_account_names: ["ohmlab-controller"],
      bound_service_account_namespaces: [ns],
      audience: "not-vault",
      token_policies: [`seed-${ns}`],
    });
    const target = await startVaultTarget(client, ns, { address: bao.addr, role: "strict" });
    try {
      await applySeed(client, seed(ns, "s", { path: `secret/${ns}/s`, data: { a: "<random:8>" } }));
      const o = await waitForReason(client, ns, "s", "Forbidden");
      assert.match(condition(o, "Ready")!.message, /audience/i);
      assert.equal((await rootKv(bao.addr, bao.rootToken).read(`secret/${ns}/s`)).exists, false);
    } finally {
      await target.stop();
    }
  });

  it("rotates nothing while the rotation cannot be announced, then rotates once when it can", async () => {
    const ns = await freshNamespace(client, "vs-rotdeny");
    await setUpVaultAuth(client, ns, bao.addr, bao.rootToken);
    const kv = rootKv(bao.addr, bao.rootToken);
    const path = `secret/${ns}/r`;
    const counter = readCounter();
    const target = await startVaultTarget(client, ns, { address: bao.addr, hooks: counter.hooks });
    try {
      await applySeed(client, seed(ns, "r", { path, data: { a: "<random:8>" } }));
      await waitForReason(client, ns, "r", "Reconciled");
      const v0 = (await kv.read(path)).version;
      // Metadata writes are no longer allowed: the data can rotate, the token cannot be recorded.
      await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/acl/seed-${ns}`, {
        policy: `path "secret/data/${ns}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns}/*" { capabilities = ["read"] }`,
      });
      await applySeed(client, seed(ns, "r", { path, data: { a: "<random:8>" }, rotate: { token: "t1" } }));
      const o = await waitForReason(client, ns, "r", "Forbidden");
      assert.equal(condition(o, "Reconciling")?.status, "True");
      // The rotation-pending marker goes before the keys (a crash between the keys and the record
      // must not rotate twice), so a refused metadata write leaves the keys as they were.
      await counter.waitForReads(path, 2);
      const held = await kv.read(path);
      assert.equal(held.version, v0, "nothing rotated while the rotation cannot be recorded");
      assert.equal(held.customMetadata[ROTATION_TOKEN_KEY], undefined);
      await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/acl/seed-${ns}`, {
        policy: `path "secret/data/${ns}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns}/*" { capabilities = ["create", "read", "update"] }`,
      });
      await eventually(
        async () => ((await getSeed(client, ns, "r")).status?.rotationToken === "t1" ? true : undefined),
        40_000,
        "the token to be recorded",
      );
      const s = await kv.read(path);
      assert.equal(s.customMetadata[ROTATION_TOKEN_KEY], "t1");
      assert.equal(s.version, v0 + 1, "the keys were generated once");
      const settled = s.version;
      await counter.waitForReads(path, 2);
      assert.equal((await kv.read(path)).version, settled, "once recorded, the token rotates nothing more");
    } finally {
      await target.stop();
    }
  });

  it("keeps the finalizer and reports Forbidden when OpenBao refuses the delete", async () => {
    const ns = await freshNamespace(client, "vs-deldeny");
    await setUpVaultAuth(client, ns, bao.addr, bao.rootToken);
    await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/acl/seed-${ns}`, {
      policy: `path "secret/data/${ns}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns}/*" { capabilities = ["create", "read", "update"] }`,
    });
    const target = await startVaultTarget(client, ns, { address: bao.addr, allowDelete: true });
    try {
      const path = `secret/${ns}/d`;
      await applySeed(client, seed(ns, "d", { path, deletionPolicy: "Delete", data: { a: "<random:8>" } }));
      await waitForReason(client, ns, "d", "Reconciled");
      await client.delete(
        {
          group: "ohmlab.fr",
          version: "v1alpha1",
          kind: "VaultSeed",
          plural: "vaultseeds",
          namespaced: true,
        },
        "d",
        ns,
      );
      const o = await waitForReason(client, ns, "d", "Forbidden");
      assert.ok(o.metadata.deletionTimestamp);
      assert.ok(o.metadata.finalizers?.length);
      assert.equal((await rootKv(bao.addr, bao.rootToken).read(path)).exists, true);
      // The grant arrives: the deletion finishes by itself.
      await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/acl/seed-${ns}`, {
        policy: `path "secret/data/${ns}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns}/*" { capabilities = ["create", "read", "update", "delete"] }`,
      });
      await eventually(
        async () =>
          await getSeed(client, ns, "d").then(
            () => undefined,
            () => true,
          ),
        40_000,
        "the object to go",
      );
      assert.equal((await rootKv(bao.addr, bao.rootToken).read(path)).exists, false);
    } finally {
      await target.stop();
    }
  });
});
