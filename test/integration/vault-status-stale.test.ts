// Issue 9, item 5: adding the finalizer of a `deletionPolicy: Delete` object triggers a reconcile
// that may run on a cached copy older than the controller's own status write. That pass must not
// write back an emptier status.managedKeys, or a later prune leaves keys behind. Every status the
// API server ever held is recorded through a watch of its own, so a transient regression fails too.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import type { VaultSeed } from "../../src/apis/vaultseed.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { findCondition } from "../../src/runtime/conditions.js";
import { Informer } from "../../src/runtime/informer.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { eventually } from "../support/kube.js";
import {
  applySeed,
  type RunningTarget,
  readCounter,
  rootKv,
  seed,
  startVaultTarget,
  vaultSuite,
} from "../support/vault.js";

const KEYS = ["a", "b", "c", "d"];

/**
 * Makes the controller's cache see each status-only update late, as a slow watch does: for
 * `lagMs` after such an update arrives, the cache still answers with the copy before it. This
 * forces the interleaving of the issue (a reconcile queued by the finalizer update starts from a
 * copy without the status just written) on every trial instead of now and then.
 */
function lagStatusEvents(informer: Informer<VaultSeed>, lagMs: number): void {
  const late = new Map<string, { before: VaultSeed; until: number }>();
  const keyOf = (o: VaultSeed) => `${o.metadata.namespace}/${o.metadata.name}`;
  informer.addHandler({
    update(o, n) {
      const statusOnly =
        o.metadata.generation === n.metadata.generation &&
        JSON.stringify(o.metadata.finalizers ?? []) === JSON.stringify(n.metadata.finalizers ?? []) &&
        JSON.stringify(o.status ?? {}) !== JSON.stringify(n.status ?? {});
      if (statusOnly && !late.has(keyOf(n))) late.set(keyOf(n), { before: o, until: Date.now() + lagMs });
      else if (!statusOnly) late.delete(keyOf(n));
    },
  });
  const get = informer.get.bind(informer);
  informer.get = (key: string) => {
    const l = late.get(key);
    if (l && Date.now() < l.until) return l.before;
    late.delete(key);
    return get(key);
  };
}

describe("VaultSeed status never regresses from a stale cached read (issue 9, item 5)", () => {
  let client: KubeClient;
  let ns: string;
  let target: RunningTarget;
  let watch: Informer<VaultSeed>;
  const counter = readCounter();
  /** Every managedKeys list each object's status has held, in order. */
  const history = new Map<string, string[][]>();

  before(async () => {
    ({ client, ns } = await vaultSuite("vs-stale"));
    watch = new Informer<VaultSeed>(client, VAULTSEED, { namespaces: [ns], log: pino({ level: "silent" }) });
    const record = (o: VaultSeed) => {
      const list = history.get(o.metadata.name!) ?? [];
      const keys = o.status?.managedKeys;
      if (keys !== undefined) list.push([...keys]);
      history.set(o.metadata.name!, list);
    };
    watch.addHandler({ add: record, update: (_, n) => record(n) });
    watch.start();
    await watch.waitForSync();
    target = await startVaultTarget(client, ns, { allowDelete: true, hooks: counter.hooks });
    lagStatusEvents(target.manager.informer<VaultSeed>(VAULTSEED), 1500);
  });
  after(async () => {
    await target.stop();
    await watch.stop();
    client.close();
  });

  it("over repeated first seeds, managedKeys only ever grows, and a later prune removes what it should", async () => {
    const trials = 30;
    const data = Object.fromEntries(KEYS.map((k) => [k, "<random:8>"]));
    await Promise.all(
      Array.from({ length: trials }, (_, i) =>
        applySeed(
          client,
          seed(ns, `t${i}`, { path: `secret/${ns}/t${i}`, deletionPolicy: "Delete", prune: true, data }),
        ),
      ),
    );
    // Each object is reconciled at least three times after its first write (finalizer pass included).
    await Promise.all(
      Array.from({ length: trials }, (_, i) => counter.waitForReads(`secret/${ns}/t${i}`, 4, 120_000)),
    );
    const regressed: string[] = [];
    for (let i = 0; i < trials; i++) {
      const seen = history.get(`t${i}`) ?? [];
      let best = 0;
      for (const keys of seen) {
        if (keys.length < best) regressed.push(`t${i}: ${JSON.stringify(seen)}`);
        best = Math.max(best, keys.length);
      }
      const o = watch.get(`${ns}/t${i}`)!;
      // On failure, say how the status evolved and what the controller logged for this object.
      const story = () =>
        `t${i} ends with every key it wrote; statuses seen: ${JSON.stringify(seen)}; controller log:\n${target.logs
          .filter((l) => l.includes(`/t${i}"`) || l.includes(`"t${i}"`))
          .join("")}`;
      if (JSON.stringify(o.status?.managedKeys) !== JSON.stringify(KEYS)) assert.fail(story());
    }
    assert.deepEqual(regressed, [], "no status write regressed managedKeys");

    // Dropping a key with prune: true removes it from every path.
    const smaller = Object.fromEntries(KEYS.slice(0, 3).map((k) => [k, "<random:8>"]));
    // The generations the smaller spec got: the watch may still hold the previous object, whose
    // Ready condition matches its own (older) generation.
    const applied = await Promise.all(
      Array.from({ length: trials }, (_, i) =>
        applySeed(
          client,
          seed(ns, `t${i}`, {
            path: `secret/${ns}/t${i}`,
            deletionPolicy: "Delete",
            prune: true,
            data: smaller,
          }),
        ),
      ),
    );
    const kv = rootKv();
    await eventually(
      async () => {
        for (let i = 0; i < trials; i++) {
          const o = watch.get(`${ns}/t${i}`);
          const ready = findCondition(o?.status?.conditions as never, "Ready");
          if (o?.metadata.generation !== applied[i]!.metadata.generation) return undefined;
          if (ready?.observedGeneration !== o?.metadata.generation || ready?.status !== "True")
            return undefined;
        }
        return true;
      },
      120_000,
      "every object to observe the smaller spec",
    );
    for (let i = 0; i < trials; i++) {
      const s = await kv.read(`secret/${ns}/t${i}`);
      assert.deepEqual(Object.keys(s.data).sort(), KEYS.slice(0, 3), `t${i}: the dropped key was pruned`);
    }
  });
});
