import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGenerator, deterministicRandom } from "../../src/targets/vault/generate.js";
import {
  type KvState,
  OWNER_MARKER_KEY,
  type Plan,
  plan,
  ROTATION_PENDING_KEY,
  ROTATION_TOKEN_KEY,
  type VaultSeedSpecInput,
} from "../../src/targets/vault/planner.js";

// A rotation is announced on the path (rotation-pending: the version its data becomes) before its
// data is written, so a controller killed between the data and the record does not rotate twice.

const object = { namespace: "ns", name: "app" };
const generator = createGenerator({ random: deterministicRandom("rotation-pending"), bcryptCost: 4 });
const absent: KvState = { exists: false, version: 0, data: {}, customMetadata: {} };
const rotSpec = (token?: string): VaultSeedSpecInput => ({
  path: "secret/ns/app",
  data: { a: "<random:16>", b: "<hex:8>" },
  ...(token ? { rotate: { token, keys: ["a"] } } : {}),
});
const planFor = (spec: VaultSeedSpecInput, current: KvState, managedKeys: string[] = []) =>
  plan({ object, spec, current, refs: new Map(), managedKeys, generator });

/** The path after the reconciler's writes: intent (if any), then data, then (unless cut) the record. */
function applied(current: KvState, p: Plan, upTo: "intent" | "data" | "all"): KvState {
  const intent = p.intentMetadata ?? current.customMetadata;
  if (upTo === "intent") return { ...current, customMetadata: intent };
  const dataWritten: KvState = {
    exists: true,
    version: p.data ? current.version + 1 : current.version,
    data: p.data ?? current.data,
    customMetadata: intent,
  };
  return upTo === "data" ? dataWritten : { ...dataWritten, customMetadata: p.customMetadata ?? intent };
}

async function seeded(): Promise<{ state: KvState; managedKeys: string[] }> {
  const first = await planFor(rotSpec(), absent);
  return { state: applied(absent, first, "all"), managedKeys: first.managedKeys };
}

describe("vault planner: a rotation killed halfway", () => {
  it("announces the version the rotated data becomes, and clears the announcement with the record", async () => {
    const { state, managedKeys } = await seeded();
    const p = await planFor(rotSpec("t1"), state, managedKeys);
    assert.equal(p.intentMetadata?.[ROTATION_PENDING_KEY], String(state.version + 1));
    assert.equal(p.intentMetadata?.[OWNER_MARKER_KEY], "ns/app");
    assert.equal(p.customMetadata?.[ROTATION_TOKEN_KEY], "t1");
    assert.equal(p.customMetadata?.[ROTATION_PENDING_KEY], undefined);
  });

  it("records a rotation whose data was stored instead of generating the keys again", async () => {
    const { state, managedKeys } = await seeded();
    const first = await planFor(rotSpec("t1"), state, managedKeys);
    const cut = applied(state, first, "data");
    const next = await planFor(rotSpec("t1"), cut, first.managedKeys);
    assert.deepEqual(next.changes, [{ action: "record-rotation" }]);
    assert.equal(next.data, null, "the rotated values stay as they were stored");
    assert.equal(next.intentMetadata, null);
    assert.equal(next.customMetadata?.[ROTATION_TOKEN_KEY], "t1");
    assert.equal(next.customMetadata?.[ROTATION_PENDING_KEY], undefined);
    const after = await planFor(rotSpec("t1"), applied(cut, next, "all"), next.managedKeys);
    assert.deepEqual(after.changes, []);
  });

  it("rotates when only the announcement was stored (the data write never happened)", async () => {
    const { state, managedKeys } = await seeded();
    const first = await planFor(rotSpec("t1"), state, managedKeys);
    const cut = applied(state, first, "intent");
    const next = await planFor(rotSpec("t1"), cut, first.managedKeys);
    assert.deepEqual(next.changes, [{ action: "rotate-field", key: "a" }, { action: "record-rotation" }]);
    assert.notEqual(
      (next.data as Record<string, unknown>)["a"],
      (state.data as Record<string, unknown>)["a"],
    );
    assert.equal(next.intentMetadata?.[ROTATION_PENDING_KEY], String(cut.version + 1));
  });

  it("announces nothing when nothing rotates: a new path, or a plain seed", async () => {
    assert.equal((await planFor(rotSpec("t1"), absent)).intentMetadata, null);
    assert.equal((await planFor(rotSpec(), absent)).intentMetadata, null);
  });

  it("drops an announcement left behind once nothing rotates any more", async () => {
    const { state, managedKeys } = await seeded();
    const stale = { ...state, customMetadata: { ...state.customMetadata, [ROTATION_PENDING_KEY]: "9" } };
    const p = await planFor(rotSpec(), stale, managedKeys);
    assert.deepEqual(p.customMetadata, { [OWNER_MARKER_KEY]: "ns/app" });
    assert.equal(p.data, null);
  });
});
