import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KvState } from "../../src/targets/vault/kv.js";
import { ReadCache } from "../../src/targets/vault/read-cache.js";

// The read cache serves references: it keeps only the paths some object copies from, so a seed of
// many paths does not hold every path's values until the next resync.

const state = (v: string): KvState => ({ exists: true, version: 1, data: { v }, customMetadata: {} });
const sources = new Set(["secret/a"]);
const cache = () =>
  new ReadCache(
    60_000,
    () => 0,
    undefined,
    (p) => sources.has(p),
  );

describe("vault ReadCache: only reference sources are kept", () => {
  it("keeps a source's state and serves it to a reference without a read", async () => {
    const c = cache();
    c.set("secret/a", state("1"));
    let reads = 0;
    const got = await c.readShared("secret/a", async () => {
      reads++;
      return state("2");
    });
    assert.deepEqual(got.data, { v: "1" });
    assert.equal(reads, 0);
  });

  it("does not keep a path nobody copies from, written or read", async () => {
    const c = cache();
    c.set("secret/b", state("1"));
    assert.equal(c.get("secret/b"), undefined);
    await c.readFresh("secret/b", async () => state("2"));
    assert.equal(c.get("secret/b"), undefined);
  });

  it("still shares a read in flight of a path it does not keep", async () => {
    const c = cache();
    let reads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const load = async () => {
      reads++;
      await gate;
      return state("1");
    };
    const first = c.readFresh("secret/b", load);
    const second = c.readFresh("secret/b", load);
    release();
    assert.deepEqual((await first).data, (await second).data);
    assert.equal(reads, 1);
  });
});
