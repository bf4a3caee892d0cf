import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { VaultSeed } from "../../src/apis/vaultseed.js";
import { silentLogger } from "../../src/runtime/log.js";
import { createGenerator, deterministicRandom } from "../../src/targets/vault/generate.js";
import type { KvState } from "../../src/targets/vault/kv.js";
import { writePlan } from "../../src/targets/vault/kv-write.js";
import { plan, type VaultSeedSpecInput } from "../../src/targets/vault/planner.js";
import { ReadCache } from "../../src/targets/vault/read-cache.js";
import type { SeedPass } from "../../src/targets/vault/seed-pass.js";
import { UnconfirmedWrites } from "../../src/targets/vault/unconfirmed-writes.js";

// The status write that lists keys before they are written (crash safety for pruning) is made
// only for an object that prunes: for the others it would double a new path's cost for nothing.

const generator = createGenerator({ random: deterministicRandom("kv-write"), bcryptCost: 4 });
const absent: KvState = { exists: false, version: 0, data: {}, customMetadata: {} };

/** Runs one first-seed write and returns the order of what was written, API server and OpenBao. */
async function firstSeed(spec: VaultSeedSpecInput): Promise<string[]> {
  const order: string[] = [];
  const obj = {
    apiVersion: "ohmlab.fr/v1alpha1",
    kind: "VaultSeed",
    metadata: { name: "app", namespace: "ns", uid: "u1", generation: 1 },
    spec,
  } as unknown as VaultSeed;
  const p = await plan({
    object: { namespace: "ns", name: "app" },
    spec,
    current: absent,
    refs: new Map(),
    managedKeys: undefined,
    generator,
  });
  const ctx = {
    d: {
      kv: {
        write: async () => {
          order.push("kv data");
          return 1;
        },
        writeMetadata: async () => {
          order.push("kv metadata");
        },
      },
      reads: new ReadCache(60_000),
      refs: { dependentsOf: () => [] },
      enqueue: () => {},
      events: { record: () => {} },
    },
    unconfirmed: new UnconfirmedWrites(),
    statuses: {
      freshest: (_key: string, o: VaultSeed) => o,
      write: async (_o: VaultSeed, status: VaultSeed["status"]) => {
        order.push(`status managedKeys=${(status?.managedKeys ?? []).join(",")}`);
        return undefined;
      },
    },
    now: () => new Date(0),
    forget: () => {},
  } as unknown as SeedPass;
  const written = await writePlan(
    ctx,
    obj,
    spec.path as string,
    p,
    absent,
    silentLogger(),
    new AbortController().signal,
    {},
  );
  assert.notEqual(written, "conflict");
  return order;
}

describe("vault writePlan: keys listed before they are written", () => {
  it("an object that prunes lists its keys in its status before the data write", async () => {
    const order = await firstSeed({ path: "secret/ns/app", prune: true, data: { a: "<random:16>", b: "x" } });
    assert.deepEqual(order, ["status managedKeys=a,b", "kv data", "kv metadata"]);
  });

  it("an object that does not prune writes only to OpenBao (its status follows the pass)", async () => {
    const order = await firstSeed({ path: "secret/ns/app", data: { a: "<random:16>", b: "x" } });
    assert.deepEqual(order, ["kv data", "kv metadata"]);
  });
});
