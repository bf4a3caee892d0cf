// Issue 9: the pure parts of the fixes (planner rules, mount verdicts, status freshness, validate).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGenerator, deterministicRandom } from "../../src/targets/vault/generate.js";
import { judgeMount, MountDirectory } from "../../src/targets/vault/mounts.js";
import {
  ADOPTION_GRACE_MS,
  type KvState,
  OWNER_MARKER_KEY,
  type PlanInput,
  plan,
} from "../../src/targets/vault/planner.js";
import { validateDocuments } from "../../src/targets/vault/validate.js";

const generator = createGenerator({ random: deterministicRandom("issue9"), bcryptCost: 4 });
const object = { namespace: "ns", name: "me" };
const absent: KvState = { exists: false, version: 0, data: {}, customMetadata: {} };

function planWith(data: Record<string, unknown>, current: KvState, more: Partial<PlanInput> = {}) {
  return plan({
    object,
    spec: { path: "secret/app", data, ...(more.spec ?? {}) },
    current,
    refs: new Map(),
    managedKeys: [],
    generator,
    ...more,
  });
}

describe("issue 9: ownership before any write", () => {
  it("a path without a marker claimed by an older object is OwnedByAnother, and nothing is written", async () => {
    const p = await planWith({ a: "<random:8>" }, absent, { claimant: "ns/older" });
    assert.equal(p.outcome.reason, "OwnedByAnother");
    assert.match(p.outcome.message, /ns\/older, which was created first/);
    assert.equal(p.data, null);
    assert.equal(p.customMetadata, null);
  });

  it("the marker decides over the claim: the object it names goes on", async () => {
    const mine: KvState = {
      exists: true,
      version: 1,
      data: { a: "x" },
      customMetadata: { [OWNER_MARKER_KEY]: "ns/me" },
    };
    const p = await planWith({ a: "<random:8>" }, mine, { claimant: "ns/older" });
    assert.equal(p.outcome.reason, "Reconciled");
  });

  it("a path written moments ago without a marker is not adopted yet; an older one is", async () => {
    const young: KvState = {
      exists: true,
      version: 1,
      data: { b: "theirs" },
      customMetadata: {},
      ageMs: 200,
    };
    const waiting = await planWith({ a: "<random:8>" }, young);
    assert.equal(waiting.outcome.kind, "pending");
    assert.equal(waiting.outcome.reason, "AdoptionPending");
    assert.equal(waiting.data, null);
    assert.equal(waiting.customMetadata, null);
    const old = await planWith({ a: "<random:8>" }, { ...young, ageMs: ADOPTION_GRACE_MS + 1 });
    assert.deepEqual(old.changes, [{ action: "adopt" }]);
  });

  it("OwnedByAnother says that removing the marker hands over a path whose owner is gone", async () => {
    const theirs: KvState = {
      exists: true,
      version: 1,
      data: {},
      customMetadata: { [OWNER_MARKER_KEY]: "ns/ghost" },
    };
    const gone = await planWith({ a: "<random:8>" }, theirs, { markerOwnerExists: () => false });
    assert.match(
      gone.outcome.message,
      /ns\/ghost, which no longer exists; removing the ohmlab\.fr\/owner marker/,
    );
    assert.doesNotMatch(gone.outcome.message, /delete one of the two/);
    const alive = await planWith({ a: "<random:8>" }, theirs, { markerOwnerExists: () => true });
    assert.match(alive.outcome.message, /delete one of the two objects/);
  });
});

describe("issue 9: placeholders, bcrypt input length", () => {
  it("a placeholder is written once but never becomes a managed key", async () => {
    const p = await planWith({ hook: "", a: "<random:8>" }, absent);
    assert.deepEqual(p.managedKeys, ["a"]);
    // The placeholder leaves the spec while prune is on: what a person typed there stays.
    const later = await planWith(
      { a: "<random:8>" },
      {
        exists: true,
        version: 1,
        data: { hook: "filled", a: "x" },
        customMetadata: { [OWNER_MARKER_KEY]: "ns/me" },
      },
      { spec: { path: "secret/app", data: { a: "<random:8>" }, prune: true }, managedKeys: p.managedKeys },
    );
    assert.equal(later.data, null, "nothing is pruned");
    assert.deepEqual(later.changes, []);
  });

  it("a bcrypt of a value over 72 bytes stalls at run time and is reported by validate", async () => {
    const filled: KvState = {
      exists: true,
      version: 1,
      data: { p: "x".repeat(73) },
      customMetadata: { [OWNER_MARKER_KEY]: "ns/me" },
    };
    const p = await planWith({ p: "", h: "<bcrypt:p>" }, filled);
    assert.equal(p.outcome.kind, "stalled");
    assert.match(p.outcome.message, /longer than bcrypt's 72-byte input/);
    const problems = validateDocuments([
      {
        file: "f.yaml",
        doc: {
          apiVersion: "ohmlab.fr/v1alpha1",
          kind: "VaultSeed",
          metadata: { name: "x", namespace: "ns" },
          spec: {
            path: "secret/x",
            data: {
              r: "<random:73>",
              h: "<bcrypt:r>",
              s: { k: "<age:secret>", h: "<bcrypt:s.k>" },
              ok: "<random:72>",
              h2: "<bcrypt:ok>",
            },
          },
        },
      },
    ]);
    assert.deepEqual(
      problems.map((x) => x.key),
      ["h", "s.h"],
    );
    assert.match(problems[0]!.message, /can be 73 bytes long, but bcrypt reads only the first 72/);
  });
});

describe("issue 9: mounts", () => {
  it("judges KV v2 fine, and KV v1, other engines and nested mounts as unsupported", () => {
    assert.deepEqual(judgeMount("secret", { type: "kv", version: "2", path: "secret/" }), { ok: true });
    const v1 = judgeMount("old", { type: "kv", version: "1", path: "old/" });
    assert.equal(v1.ok, false);
    assert.match(!v1.ok ? v1.message : "", /KV version 1/);
    const transit = judgeMount("tr", { type: "transit", path: "tr/" });
    assert.match(!transit.ok ? transit.message : "", /transit mount/);
    assert.equal(judgeMount("a", { type: "kv", version: "2", path: "a/b/" }).ok, false);
    assert.deepEqual(judgeMount("unknown", undefined), { ok: true });
  });

  it("asks once per mount while the answer is fresh, and again after", async () => {
    let asked = 0;
    let now = 0;
    const dir = new MountDirectory(
      async () => {
        asked++;
        return { type: "kv", version: "2", path: "secret/" };
      },
      1000,
      () => now,
    );
    await Promise.all([dir.check("secret/a"), dir.check("secret/b"), dir.check("secret/c/d")]);
    assert.equal(asked, 1);
    now = 2000;
    await dir.check("secret/a");
    assert.equal(asked, 2);
  });
});

describe("issue 9: key paths the status can hold", () => {
  it("rejects a key path longer than status.managedKeys allows, naming where it is", async () => {
    const long = "k".repeat(600);
    const p = await planWith({ a: { [long]: { [long]: "<random:8>" } } }, absent);
    assert.equal(p.outcome.reason, "InvalidSpec");
    assert.match(p.outcome.message, /longer than 1024 characters/);
    assert.equal(p.data, null);
  });
});

describe("issue 9: deep trees", () => {
  it("refuses data nested deeper than 64 levels without exhausting the stack", async () => {
    let deep: Record<string, unknown> = { leaf: "x" };
    for (let i = 0; i < 100_000; i++) deep = { n: deep };
    const p = await planWith(deep, absent);
    assert.equal(p.outcome.reason, "InvalidSpec");
    assert.match(p.outcome.message, /nested deeper than 64 levels/);
  });
});

describe("issue 9: writes whose answer was lost", () => {
  it("recognises the data it sent, whatever the key order or prototype, and nothing else", async () => {
    const { UnconfirmedWrites } = await import("../../src/targets/vault/unconfirmed-writes.js");
    const w = new UnconfirmedWrites();
    const sent = Object.assign(Object.create(null), { b: "2", a: { y: 1, x: true } });
    w.record("ns/o", "uid-1", "secret/p", sent, ["a.x", "a.y", "b"]);
    assert.deepEqual(w.landed("ns/o", "uid-1", "secret/p", JSON.parse('{"a":{"x":true,"y":1},"b":"2"}')), [
      "a.x",
      "a.y",
      "b",
    ]);
    assert.equal(w.landed("ns/o", "uid-1", "secret/p", { a: { x: true, y: 1 }, b: "3" }), undefined);
    assert.equal(
      w.landed("ns/o", "uid-2", "secret/p", JSON.parse('{"a":{"x":true,"y":1},"b":"2"}')),
      undefined,
    );
    w.forget("ns/o");
    assert.equal(
      w.landed("ns/o", "uid-1", "secret/p", JSON.parse('{"a":{"x":true,"y":1},"b":"2"}')),
      undefined,
    );
  });
});
