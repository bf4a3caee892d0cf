// Issue 9, item 4: objects created together on one new path. Within one controller the oldest
// object (then the lowest uid) owns the path before anything is written; across two controllers
// that cannot see each other's objects, a path created moments ago is never adopted, so no path
// ever holds the keys of two objects.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { VaultSeed } from "../../src/apis/vaultseed.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { findCondition } from "../../src/runtime/conditions.js";
import { OWNER_MARKER_KEY } from "../../src/targets/vault/planner.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { baoCall } from "../../src/testenv/openbao.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  applySeed,
  installVaultSeedCrd,
  rootKv,
  seed,
  setUpVaultAuth,
  startVaultTarget,
} from "../support/vault.js";

const FINAL = new Set(["Reconciled", "OwnedByAnother"]);

/** Every object of `ns` with a final Ready reason for its generation, or undefined while any is not. */
async function settled(
  client: KubeClient,
  ns: string,
  count: number,
): Promise<Map<string, VaultSeed> | undefined> {
  const list = await client.list<VaultSeed>(VAULTSEED, { namespace: ns });
  if (list.items.length < count) return undefined;
  const out = new Map<string, VaultSeed>();
  for (const o of list.items) {
    const ready = findCondition(o.status?.conditions as never, "Ready");
    if (!ready || !FINAL.has(ready.reason) || ready.observedGeneration !== o.metadata.generation)
      return undefined;
    out.set(o.metadata.name!, o);
  }
  return out;
}

const reasonOf = (o: VaultSeed) => findCondition(o.status?.conditions as never, "Ready")!.reason;

function keysOf(data: Record<string, unknown>): string[] {
  return Object.keys(data).sort();
}

describe("VaultSeed: objects racing for one new path (issue 9, item 4)", () => {
  let client: KubeClient;
  const kv = rootKv();

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
  });
  after(() => client.close());

  it("within one controller, the oldest object (then the lowest uid) owns the path and the others write nothing", async () => {
    const ns = await freshNamespace(client, "vs-claim");
    await setUpVaultAuth(client, ns);
    const pairs = 20;
    // Created while no controller runs, so the controller meets every object at once.
    for (let i = 0; i < pairs; i++) {
      const path = `secret/${ns}/p${i}`;
      await applySeed(client, seed(ns, `a${i}`, { path, data: { a0: "<random:8>", a1: "<random:8>" } }));
      await applySeed(client, seed(ns, `b${i}`, { path, data: { b0: "<random:8>", b1: "<random:8>" } }));
    }
    const target = await startVaultTarget(client, ns);
    try {
      const all = await eventually(() => settled(client, ns, pairs * 2), 120_000, "every object to settle");
      for (let i = 0; i < pairs; i++) {
        const a = all.get(`a${i}`)!;
        const b = all.get(`b${i}`)!;
        const order = [a, b].sort(
          (x, y) =>
            Date.parse(x.metadata.creationTimestamp!) - Date.parse(y.metadata.creationTimestamp!) ||
            (x.metadata.uid! < y.metadata.uid! ? -1 : 1),
        );
        const [older, younger] = order as [VaultSeed, VaultSeed];
        assert.equal(reasonOf(older), "Reconciled", `p${i}: the older object owns the path`);
        assert.equal(reasonOf(younger), "OwnedByAnother", `p${i}: the younger one reports OwnedByAnother`);
        const s = await kv.read(`secret/${ns}/p${i}`);
        assert.equal(s.customMetadata[OWNER_MARKER_KEY], `${ns}/${older.metadata.name}`);
        const prefix = older.metadata.name!.slice(0, 1);
        assert.deepEqual(keysOf(s.data), [`${prefix}0`, `${prefix}1`], `p${i} holds the owner's keys only`);
        assert.equal(s.version, 1, `p${i}: one write, nothing by the other object`);
      }
    } finally {
      await target.stop();
    }
  });

  it("across two controllers, over 100 racing trials no path ever holds the keys of two objects", async () => {
    const ns1 = await freshNamespace(client, "vs-race1");
    const ns2 = await freshNamespace(client, "vs-race2");
    await setUpVaultAuth(client, ns1);
    await setUpVaultAuth(client, ns2);
    // The second namespace's controller may write the first one's paths too: both claim them.
    const bao = sharedEnv().bao;
    await baoCall(bao.addr, bao.rootToken, "PUT", `sys/policies/acl/seed-${ns2}`, {
      policy: `path "secret/data/${ns1}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns1}/*" { capabilities = ["create", "read", "update"] }`,
    });
    const t1 = await startVaultTarget(client, ns1);
    const t2 = await startVaultTarget(client, ns2);
    const trials = 100;
    try {
      // Both objects of a trial are created at the same moment; trials overlap in batches.
      for (let start = 0; start < trials; start += 10) {
        await Promise.all(
          Array.from({ length: 10 }, (_, j) => start + j).flatMap((i) => {
            const path = `secret/${ns1}/race${i}`;
            return [
              applySeed(
                client,
                seed(ns1, `r${i}`, { path, data: { a0: "<random:8>", a1: "<random:8>", a2: "<random:8>" } }),
              ),
              applySeed(
                client,
                seed(ns2, `r${i}`, { path, data: { b0: "<random:8>", b1: "<random:8>", b2: "<random:8>" } }),
              ),
            ];
          }),
        );
      }
      const one = await eventually(() => settled(client, ns1, trials), 240_000, `${ns1} to settle`);
      const two = await eventually(() => settled(client, ns2, trials), 240_000, `${ns2} to settle`);
      const mixed: string[] = [];
      for (let i = 0; i < trials; i++) {
        const s = await kv.read(`secret/${ns1}/race${i}`);
        const keys = keysOf(s.data);
        const aKeys = keys.filter((k) => k.startsWith("a"));
        const bKeys = keys.filter((k) => k.startsWith("b"));
        if (aKeys.length > 0 && bKeys.length > 0) mixed.push(`race${i}: ${keys.join(",")}`);
        const owner = s.customMetadata[OWNER_MARKER_KEY];
        const [mine, other] = owner === `${ns1}/r${i}` ? [one, two] : [two, one];
        assert.equal(
          reasonOf(mine.get(`r${i}`)!),
          "Reconciled",
          `race${i}: the marker's object is Reconciled`,
        );
        assert.equal(
          reasonOf(other.get(`r${i}`)!),
          "OwnedByAnother",
          `race${i}: the other reports OwnedByAnother`,
        );
        const expected = owner === `${ns1}/r${i}` ? ["a0", "a1", "a2"] : ["b0", "b1", "b2"];
        assert.deepEqual(keys, expected, `race${i} holds exactly its owner's keys`);
      }
      assert.deepEqual(mixed, [], "no path holds keys of two objects");
    } finally {
      await t1.stop();
      await t2.stop();
    }
  });
});
