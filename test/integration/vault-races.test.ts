import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { BackendError } from "../../src/targets/vault/backend-errors.js";
import type { KvClient, KvState } from "../../src/targets/vault/kv.js";
import { OWNER_MARKER_KEY } from "../../src/targets/vault/planner.js";
import type { KvBackend } from "../../src/targets/vault/reconciler.js";
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

describe("VaultSeed compare-and-set", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
    ns = await freshNamespace(client, "vs-cas");
    await setUpVaultAuth(client, ns);
    kv = rootKv();
  });
  after(() => client.close());

  it("keeps a human edit made between the controller's read and its write", async () => {
    const path = `secret/${ns}/edited`;
    await kv.write(path, { user: "alice" }, 0);
    await kv.writeMetadata(path, { "ohmlab.fr/owner": `${ns}/edited` });
    let interfered = 0;
    // A person writes right after the controller read the path, before its write lands.
    const wrap = (inner: KvBackend): KvBackend => ({
      read: (p) => inner.read(p),
      writeMetadata: (p, m) => inner.writeMetadata(p, m),
      deleteAll: (p) => inner.deleteAll(p),
      async write(p, data, cas) {
        if (p === path && interfered === 0) {
          interfered++;
          const now: KvState = await kv.read(path);
          await kv.write(path, { ...now.data, user: "bob-typed-this" }, now.version);
        }
        return inner.write(p, data, cas);
      },
    });
    const target = await startVaultTarget(client, ns, { hooks: { wrapKv: wrap } });
    try {
      await applySeed(
        client,
        seed(ns, "edited", { path, data: { user: "<random:8>", password: "<random:16>" } }),
      );
      await waitForReason(client, ns, "edited", "Reconciled");
      const s = await kv.read(path);
      const d = s.data as Record<string, string>;
      assert.equal(interfered, 1);
      assert.equal(d["user"], "bob-typed-this", "the edit made between read and write survives");
      assert.match(d["password"]!, /^[A-Za-z0-9]{16}$/);
      assert.equal(s.version, 3, "1 initial, 1 by the person, 1 by the controller after planning again");
      assert.ok(target.logs.some((l) => l.includes("reading and planning again")));
    } finally {
      await target.stop();
    }
  });

  it("a write whose answer is lost but which landed keeps its keys managed and the path its own", async () => {
    const path = `secret/${ns}/lost-answer`;
    let lost = 0;
    // OpenBao stores the first write, and the answer never reaches the controller.
    const wrap = (inner: KvBackend): KvBackend => ({
      read: (p) => inner.read(p),
      writeMetadata: (p, m) => inner.writeMetadata(p, m),
      deleteAll: (p) => inner.deleteAll(p),
      async write(p, data, cas) {
        const version = await inner.write(p, data, cas);
        if (p === path && lost++ === 0)
          throw new BackendError("unavailable", "OpenBao did not answer (timeout)");
        return version;
      },
    });
    const target = await startVaultTarget(client, ns, { hooks: { wrapKv: wrap } });
    try {
      await applySeed(
        client,
        seed(ns, "lost-answer", { path, prune: true, data: { a: "<random:8>", b: "<random:8>" } }),
      );
      const o = await waitForReason(client, ns, "lost-answer", "Reconciled", 30_000);
      assert.equal(lost, 1);
      assert.deepEqual(o.status?.managedKeys, ["a", "b"], "the keys it wrote stay its own to prune");
      const s = await kv.read(path);
      assert.equal(s.version, 1, "the landed write is not written again");
      assert.equal(s.customMetadata[OWNER_MARKER_KEY], `${ns}/lost-answer`);
    } finally {
      await target.stop();
    }
  });

  it("two controllers racing on one path converge without losing a key", async () => {
    const path = `secret/${ns}/raced`;
    // Both controllers count their reads together: "n more reads" means n more passes between them.
    const counter = readCounter();
    const t1 = await startVaultTarget(client, ns, { hooks: counter.hooks });
    const t2 = await startVaultTarget(client, ns, { hooks: counter.hooks });
    try {
      const keys = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, "<random:12>"]));
      await applySeed(client, seed(ns, "raced", { path, data: keys }));
      await waitForReason(client, ns, "raced", "Reconciled");
      await counter.waitForReads(path, 4);
      const s = await kv.read(path);
      assert.equal(Object.keys(s.data).length, 20);
      const settled = s.data;
      await counter.waitForReads(path, 4);
      const later = await kv.read(path);
      assert.deepEqual(later.data, settled, "once seeded, neither controller rewrites a value");
      assert.ok(later.version <= 2, `one seed write (and at most one losing retry), got ${later.version}`);
      const o = await getSeed(client, ns, "raced");
      assert.equal(o.status?.kvVersion, later.version);
    } finally {
      await t1.stop();
      await t2.stop();
    }
  });

  it("two objects on one path: one owns it, the other reports OwnedByAnother", async () => {
    const path = `secret/${ns}/shared`;
    const target = await startVaultTarget(client, ns);
    try {
      await applySeed(client, seed(ns, "first", { path, data: { a: "<random:8>" } }));
      await waitForReason(client, ns, "first", "Reconciled");
      await applySeed(client, seed(ns, "second", { path, data: { a: "<random:8>", b: "<random:8>" } }));
      const o = await waitForReason(client, ns, "second", "OwnedByAnother");
      assert.match(condition(o, "Ready")!.message, new RegExp(`${ns}/first`));
      const s = await kv.read(path);
      assert.deepEqual(Object.keys(s.data), ["a"]);
      await eventually(async () => (await kv.read(path)).version === 1 || undefined);
    } finally {
      await target.stop();
    }
  });
});
