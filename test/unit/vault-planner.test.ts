import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGenerator, deterministicRandom } from "../../src/targets/vault/generate.js";
import { summarizeChanges } from "../../src/targets/vault/plan-summary.js";
import {
  type KvState,
  OWNER_MARKER_KEY,
  type Plan,
  type PlanInput,
  plan,
  ROTATION_TOKEN_KEY,
  type VaultSeedSpecInput,
} from "../../src/targets/vault/planner.js";
import { analyseRefs, readRefValue } from "../../src/targets/vault/refs.js";
import type { DataTree } from "../../src/targets/vault/tree.js";
import { compileSeed } from "../../src/targets/vault/validate.js";

/** The planner builds prototype-less maps; compare them as the JSON that goes to OpenBao. */
const plain = (value: unknown): unknown => (value == null ? value : JSON.parse(JSON.stringify(value)));

const object = { namespace: "vault-operator-system", name: "keycloak" };
const OWNER = "vault-operator-system/keycloak";
const generator = createGenerator({ random: deterministicRandom("planner"), bcryptCost: 4 });
const bcryptCheck = createGenerator({ bcryptCost: 4 });

const absent: KvState = { exists: false, version: 0, data: {}, customMetadata: {} };

function owned(data: DataTree, extra: Record<string, string> = {}, version = 1): KvState {
  return { exists: true, version, data, customMetadata: { [OWNER_MARKER_KEY]: OWNER, ...extra } };
}

function spec(data: Record<string, unknown>, more: Partial<VaultSeedSpecInput> = {}): VaultSeedSpecInput {
  return { path: "ohmlab/platforms/production/core/keycloak", data, ...more };
}

async function planFor(
  seedSpec: VaultSeedSpecInput,
  current: KvState,
  more: Partial<Omit<PlanInput, "spec" | "current">> = {},
): Promise<Plan> {
  return plan({ object, spec: seedSpec, current, refs: new Map(), managedKeys: [], generator, ...more });
}

/** What the path holds once the reconciler has applied a plan: data (with CAS), then metadata. */
function applied(current: KvState, result: Plan, { metadata = true } = {}): KvState {
  return {
    exists: current.exists || result.data !== null,
    version: result.data !== null ? current.version + 1 : current.version,
    data: result.data ?? current.data,
    customMetadata: metadata && result.customMetadata ? result.customMetadata : current.customMetadata,
  };
}

function assertQuiet(result: Plan): void {
  assert.deepEqual(result.changes, []);
  assert.equal(result.data, null);
  assert.equal(result.customMetadata, null);
  assert.equal(result.outcome.kind, "ok");
  assert.equal(result.outcome.reason, "Reconciled");
}

function leaf(data: DataTree | null, key: string): unknown {
  let node: unknown = data;
  for (const segment of key.split(".")) node = (node as Record<string, unknown>)[segment];
  return node;
}

const keycloak = {
  admin: { username: "admin", password: "<random:24>", passwordHashed: "<bcrypt:admin.password>" },
  clients: { "grafana-core": { clientSecret: "<random:32>" } },
  webhook: "",
};

describe("vault planner: seeding a new path", () => {
  it("creates the path with every key and its owner marker", async () => {
    const result = await planFor(spec(keycloak), absent);
    assert.deepEqual(result.changes, [
      { action: "create-path" },
      { action: "add-field", key: "admin.password" },
      { action: "add-field", key: "admin.username" },
      { action: "add-field", key: "clients.grafana-core.clientSecret" },
      { action: "add-field", key: "webhook" },
      { action: "add-field", key: "admin.passwordHashed" },
    ]);
    assert.equal(result.expectedVersion, 0);
    const data = result.data!;
    assert.match(leaf(data, "admin.password") as string, /^[A-Za-z0-9]{24}$/);
    assert.equal(leaf(data, "admin.username"), "admin");
    assert.match(leaf(data, "clients.grafana-core.clientSecret") as string, /^[A-Za-z0-9]{32}$/);
    assert.equal(leaf(data, "webhook"), "");
    assert.ok(
      await bcryptCheck.bcryptMatches(
        leaf(data, "admin.password") as string,
        leaf(data, "admin.passwordHashed") as string,
      ),
    );
    assert.deepEqual(result.customMetadata, { [OWNER_MARKER_KEY]: OWNER });
    assert.deepEqual(result.managedKeys, [
      "admin.password",
      "admin.passwordHashed",
      "admin.username",
      "clients.grafana-core.clientSecret",
    ]);
    assert.equal(result.outcome.kind, "ok");
    assert.equal(result.planAgain, false);
  });

  it("plans nothing at all on the next pass (quiet resync, no new bcrypt salt)", async () => {
    const first = await planFor(spec(keycloak), absent);
    const state = applied(absent, first);
    const second = await planFor(spec(keycloak), state, { managedKeys: first.managedKeys });
    assertQuiet(second);
    assert.deepEqual(second.managedKeys, first.managedKeys);
    assert.equal(second.outcome.message, "the path holds what is declared");
  });

  it("writes over the CAS version of a path whose versions were deleted", async () => {
    const gone: KvState = {
      exists: false,
      version: 7,
      data: {},
      customMetadata: { [OWNER_MARKER_KEY]: OWNER },
    };
    const result = await planFor(spec({ k: "<uuid>" }), gone);
    assert.equal(result.expectedVersion, 7);
    assert.deepEqual(result.changes, [{ action: "create-path" }, { action: "add-field", key: "k" }]);
    assert.equal(result.customMetadata, null);
  });
});

describe("vault planner: seed once", () => {
  it("never overwrites an existing key and generates a missing one", async () => {
    const state = owned({ admin: { password: "typed-by-hand", username: "root" }, webhook: "" });
    const result = await planFor(spec(keycloak), state);
    assert.equal(leaf(result.data, "admin.password"), "typed-by-hand");
    assert.equal(leaf(result.data, "admin.username"), "root");
    assert.deepEqual(
      result.changes.map((c) => `${c.action} ${c.key}`),
      ["add-field clients.grafana-core.clientSecret", "add-field admin.passwordHashed"],
    );
    assert.ok(
      await bcryptCheck.bcryptMatches("typed-by-hand", leaf(result.data, "admin.passwordHashed") as string),
    );
    assert.equal(result.expectedVersion, 1);
  });

  it("writes a placeholder once and keeps what a person put there", async () => {
    const first = await planFor(spec({ webhook: "" }), absent);
    assert.deepEqual(plain(first.data), { webhook: "" });
    const filled = owned({ webhook: "https://hooks.example/abc" });
    assertQuiet(await planFor(spec({ webhook: "" }), filled));
  });

  it("does not touch an existing value when its template changes", async () => {
    const first = await planFor(spec({ token: "<random:24>", id: "<hex:8>" }), absent);
    const state = applied(absent, first);
    assertQuiet(
      await planFor(spec({ token: "<random:48>", id: "<uuid>" }), state, { managedKeys: first.managedKeys }),
    );
  });

  it("leaves keys nobody declared alone", async () => {
    const state = owned({ k: "v", extra: { by: "hand" } });
    const result = await planFor(spec({ k: "<uuid>", n: "<hex:4>" }), state);
    assert.deepEqual(plain(leaf(result.data, "extra")), { by: "hand" });
  });

  it("stalls instead of replacing a value that sits where a map is declared", async () => {
    const result = await planFor(
      spec({ admin: { password: "<random:8>" }, other: "<uuid>" }),
      owned({ admin: "flat" }),
    );
    assert.equal(result.outcome.kind, "stalled");
    assert.equal(result.outcome.reason, "InvalidSpec");
    assert.equal(
      result.outcome.message,
      "admin.password cannot be written: admin holds a value instead of a map; remove admin from the path by hand, or set prune: true if this controller wrote it",
    );
    assert.equal(leaf(result.data, "admin"), "flat");
    assert.deepEqual(result.changes, [{ action: "add-field", key: "other" }]);
  });
});

describe("vault planner: references", () => {
  const refSpec = spec({ db: { password: "<ref:ohmlab/apps/db#users.app>" } });
  const ref = "ohmlab/apps/db#users.app";

  it("copies the source and follows it when it changes or the copy is edited", async () => {
    const first = await planFor(refSpec, absent, { refs: new Map([[ref, "one"]]) });
    assert.deepEqual(plain(first.data), { db: { password: "one" } });
    let state = applied(absent, first);
    assertQuiet(await planFor(refSpec, state, { refs: new Map([[ref, "one"]]) }));
    const changed = await planFor(refSpec, state, { refs: new Map([[ref, "two"]]) });
    assert.deepEqual(changed.changes, [{ action: "update-field", key: "db.password" }]);
    assert.deepEqual(plain(changed.data), { db: { password: "two" } });
    state = owned({ db: { password: "edited" } });
    const putBack = await planFor(refSpec, state, { refs: new Map([[ref, "two"]]) });
    assert.deepEqual(plain(putBack.data), { db: { password: "two" } });
  });

  it("writes nothing while a source is missing or empty, not even the other keys", async () => {
    const twoRefs = spec({
      a: "<ref:ohmlab/apps/db#users.app>",
      b: "<ref:ohmlab/apps/other#k>",
      generated: "<random:8>",
    });
    for (const refs of [new Map(), new Map([[ref, ""]])]) {
      for (const current of [absent, owned({}), { ...owned({}), customMetadata: {} }]) {
        const result = await planFor(twoRefs, current, { refs });
        assert.equal(result.outcome.kind, "pending");
        assert.equal(result.outcome.reason, "RefPending");
        assert.equal(result.data, null);
        assert.equal(result.customMetadata, null);
        assert.deepEqual(result.changes, []);
      }
    }
    const result = await planFor(twoRefs, absent, { refs: new Map([[ref, ""]]) });
    assert.equal(
      result.outcome.message,
      "waiting for a (source ohmlab/apps/db#users.app is empty), b (source ohmlab/apps/other#k is missing)",
    );
  });

  it("stalls with RefCycle and writes nothing when the path is in a cycle", async () => {
    const result = await planFor(refSpec, absent, {
      refs: new Map([[ref, "x"]]),
      refCycle: ["ohmlab/b", "ohmlab/a"],
    });
    assert.deepEqual(result.outcome, {
      kind: "stalled",
      reason: "RefCycle",
      message: "reference cycle between paths ohmlab/a, ohmlab/b",
    });
    assert.equal(result.data, null);
  });
});

describe("vault planner: bcrypt", () => {
  const hashSpec = spec({ password: "", hashed: "<bcrypt:password>", other: "<random:8>" });

  it("stalls on a hash of an empty value while writing the rest, then hashes once filled", async () => {
    const first = await planFor(hashSpec, absent);
    assert.equal(first.outcome.kind, "stalled");
    assert.equal(first.outcome.reason, "InvalidSpec");
    assert.equal(
      first.outcome.message,
      "hashed hashes password, which is still empty; the hash is written once password is filled in",
    );
    assert.deepEqual(Object.keys(first.data!).sort(), ["other", "password"]);
    const waiting = applied(absent, first);
    const again = await planFor(hashSpec, waiting, { managedKeys: first.managedKeys });
    assert.equal(again.outcome.kind, "stalled");
    assert.equal(again.data, null);
    const filled = { ...waiting, data: { ...waiting.data, password: "chosen" } };
    const hashed = await planFor(hashSpec, filled, { managedKeys: first.managedKeys });
    assert.equal(hashed.outcome.kind, "ok");
    assert.deepEqual(hashed.changes, [{ action: "add-field", key: "hashed" }]);
    assert.ok(await bcryptCheck.bcryptMatches("chosen", leaf(hashed.data, "hashed") as string));
  });

  it("keeps a matching hash and rehashes when the value changes", async () => {
    const hash = await bcryptCheck.bcryptHash("first");
    assertQuiet(await planFor(hashSpec, owned({ password: "first", hashed: hash, other: "x" })));
    const result = await planFor(hashSpec, owned({ password: "second", hashed: hash, other: "x" }));
    assert.deepEqual(result.changes, [{ action: "update-field", key: "hashed" }]);
    const rehash = leaf(result.data, "hashed") as string;
    assert.notEqual(rehash, hash);
    assert.ok(await bcryptCheck.bcryptMatches("second", rehash));
  });

  it("replaces a hash that is not a bcrypt hash", async () => {
    const result = await planFor(hashSpec, owned({ password: "v", hashed: "plain", other: "x" }));
    assert.deepEqual(result.changes, [{ action: "update-field", key: "hashed" }]);
  });
});

describe("vault planner: adoption and ownership", () => {
  it("adopts an unowned path with a metadata write only and keeps foreign metadata", async () => {
    const state: KvState = {
      exists: true,
      version: 4,
      data: { admin: { password: "old" } },
      customMetadata: { team: "db" },
    };
    const result = await planFor(spec(keycloak), state, { managedKeys: undefined });
    assert.deepEqual(result.changes, [{ action: "adopt" }]);
    assert.equal(result.data, null);
    assert.deepEqual(result.customMetadata, { team: "db", [OWNER_MARKER_KEY]: OWNER });
    assert.deepEqual(result.managedKeys, []);
    assert.equal(result.planAgain, true);
    assert.equal(summarizeChanges(result.changes), "1 adopt");
  });

  it("seeds what is missing on the pass after adoption, leaving existing values", async () => {
    const state: KvState = {
      exists: true,
      version: 4,
      data: {
        admin: { password: "old", username: "admin" },
        webhook: "",
        clients: { "grafana-core": { clientSecret: "s" } },
      },
      customMetadata: {},
    };
    const adopted = applied(state, await planFor(spec(keycloak), state, { managedKeys: undefined }));
    assert.equal(adopted.version, 4);
    const next = await planFor(spec(keycloak), adopted, { managedKeys: [] });
    assert.deepEqual(next.changes, [{ action: "add-field", key: "admin.passwordHashed" }]);
    assert.equal(leaf(next.data, "admin.password"), "old");
    assert.deepEqual(next.managedKeys, ["admin.passwordHashed"]);
    assert.equal(next.customMetadata, null);
  });

  it("leaves a path owned by another object alone", async () => {
    const state: KvState = {
      exists: true,
      version: 2,
      data: {},
      customMetadata: { [OWNER_MARKER_KEY]: "other-ns/other" },
    };
    const result = await planFor(spec(keycloak), state, { managedKeys: ["webhook"] });
    assert.equal(result.outcome.kind, "conflict-owner");
    assert.equal(result.outcome.reason, "OwnedByAnother");
    assert.match(result.outcome.message, /^the path is owned by other-ns\/other;/);
    assert.equal(result.data, null);
    assert.equal(result.customMetadata, null);
    assert.deepEqual(result.managedKeys, ["webhook"]);
  });

  it("stalls when custom_metadata has no room left for the marker", async () => {
    const full = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, "v"]));
    const result = await planFor(spec({ k: "<uuid>" }), {
      exists: true,
      version: 1,
      data: {},
      customMetadata: full,
    });
    assert.equal(result.outcome.kind, "stalled");
    assert.match(result.outcome.message, /65 keys, more than 64/);
    assert.equal(result.customMetadata, null);
  });
});

describe("vault planner: rotation", () => {
  const rotSpec = (rotate?: VaultSeedSpecInput["rotate"]) =>
    spec(
      { a: "<random:16>", b: "<hex:8>", c: "<uuid>", hash: "<bcrypt:a>", lit: "fixed", hole: "" },
      rotate ? { rotate } : {},
    );

  async function seeded(): Promise<{ state: KvState; managedKeys: string[] }> {
    const first = await planFor(rotSpec(), absent);
    return { state: applied(absent, first), managedKeys: first.managedKeys };
  }

  it("regenerates the listed keys once, data first, then records the token", async () => {
    const { state, managedKeys } = await seeded();
    const result = await planFor(rotSpec({ token: "2026-10-12", keys: ["a"] }), state, { managedKeys });
    assert.deepEqual(result.changes, [
      { action: "rotate-field", key: "a" },
      { action: "update-field", key: "hash" },
      { action: "record-rotation" },
    ]);
    assert.notEqual(leaf(result.data, "a"), leaf(state.data, "a"));
    for (const key of ["b", "c", "lit", "hole"]) assert.equal(leaf(result.data, key), leaf(state.data, key));
    assert.ok(
      await bcryptCheck.bcryptMatches(leaf(result.data, "a") as string, leaf(result.data, "hash") as string),
    );
    assert.deepEqual(result.customMetadata, {
      [OWNER_MARKER_KEY]: OWNER,
      [ROTATION_TOKEN_KEY]: "2026-10-12",
    });
    assert.equal(result.expectedVersion, state.version);

    const after = applied(state, result);
    assertQuiet(
      await planFor(rotSpec({ token: "2026-10-12", keys: ["a"] }), after, {
        managedKeys: result.managedKeys,
      }),
    );
  });

  it("rotates every generated key when no keys are listed", async () => {
    const { state, managedKeys } = await seeded();
    const result = await planFor(rotSpec({ token: "t1" }), state, { managedKeys });
    assert.deepEqual(
      summarizeChanges(result.changes),
      "1 update-field (hash), 3 rotate-field (a, b, c), 1 record-rotation",
    );
    for (const key of ["a", "b", "c"]) assert.notEqual(leaf(result.data, key), leaf(state.data, key));
    assert.equal(leaf(result.data, "lit"), "fixed");
  });

  it("rotates again while the token could not be recorded", async () => {
    const { state, managedKeys } = await seeded();
    const once = await planFor(rotSpec({ token: "t1", keys: ["b"] }), state, { managedKeys });
    const dataOnly = applied(state, once, { metadata: false });
    const again = await planFor(rotSpec({ token: "t1", keys: ["b"] }), dataOnly, {
      managedKeys: once.managedKeys,
    });
    assert.deepEqual(again.changes, [{ action: "rotate-field", key: "b" }, { action: "record-rotation" }]);
    assert.notEqual(leaf(again.data, "b"), leaf(dataOnly.data, "b"));
  });

  it("records the token of a path it creates without rotating anything", async () => {
    const result = await planFor(rotSpec({ token: "t0", keys: ["a"] }), absent);
    assert.equal(result.changes.filter((c) => c.action === "rotate-field").length, 0);
    assert.deepEqual(result.changes.at(-1), { action: "record-rotation" });
    assert.equal(result.customMetadata?.[ROTATION_TOKEN_KEY], "t0");
  });

  it("reports rotation keys that are unknown or not generated, writing nothing", async () => {
    const { state } = await seeded();
    for (const keys of [["nope"], ["lit"], ["hash"]]) {
      const result = await planFor(rotSpec({ token: "t", keys }), state);
      assert.equal(result.outcome.kind, "invalid");
      assert.equal(result.outcome.reason, "InvalidRotation");
      assert.match(result.outcome.message, new RegExp(`rotate.keys names ${keys[0]}, which`));
      assert.equal(result.data, null);
      assert.equal(result.customMetadata, null);
    }
  });
});

describe("vault planner: age pairs", () => {
  const ageSpec = (rotate?: VaultSeedSpecInput["rotate"]) =>
    spec(
      { sops: { key: "<age:secret>", recipient: "<age:public>" }, other: "<random:8>" },
      rotate ? { rotate } : {},
    );

  async function assertPair(data: DataTree | null): Promise<void> {
    const secret = leaf(data, "sops.key") as string;
    assert.match(secret, /^AGE-SECRET-KEY-1/);
    assert.equal(await generator.agePublicOf(secret), leaf(data, "sops.recipient"));
  }

  it("generates a matching pair", async () => {
    const result = await planFor(ageSpec(), absent);
    await assertPair(result.data);
    const state = applied(absent, result);
    assertQuiet(await planFor(ageSpec(), state, { managedKeys: result.managedKeys }));
  });

  it("rotates both halves together even when one is listed", async () => {
    const first = await planFor(ageSpec(), absent);
    const state = applied(absent, first);
    const rotated = await planFor(ageSpec({ token: "r", keys: ["sops.recipient"] }), state);
    assert.deepEqual(
      summarizeChanges(rotated.changes),
      "2 rotate-field (sops.key, sops.recipient), 1 record-rotation",
    );
    assert.notEqual(leaf(rotated.data, "sops.key"), leaf(state.data, "sops.key"));
    assert.equal(leaf(rotated.data, "other"), leaf(state.data, "other"));
    await assertPair(rotated.data);
  });

  it("puts the public half back in line with the secret", async () => {
    const first = await planFor(ageSpec(), absent);
    const state = applied(absent, first);
    const edited = {
      ...state,
      data: { ...state.data, sops: { key: leaf(state.data, "sops.key"), recipient: "age1wrong" } },
    };
    const result = await planFor(ageSpec(), edited);
    assert.deepEqual(result.changes, [{ action: "update-field", key: "sops.recipient" }]);
    await assertPair(result.data);
  });

  it("makes a new pair when the secret is gone, replacing the orphaned public", async () => {
    const result = await planFor(ageSpec(), owned({ sops: { recipient: "age1orphan" }, other: "x" }));
    assert.deepEqual(result.changes, [
      { action: "add-field", key: "sops.key" },
      { action: "update-field", key: "sops.recipient" },
    ]);
    await assertPair(result.data);
  });

  it("stalls when the stored secret is not an age identity", async () => {
    const result = await planFor(ageSpec(), owned({ sops: { key: "garbage" }, other: "x" }));
    assert.equal(result.outcome.kind, "stalled");
    assert.equal(
      result.outcome.message,
      "sops.recipient cannot follow sops.key, which does not hold an age X25519 identity",
    );
    assert.equal(result.data, null);
  });
});

describe("vault planner: prune", () => {
  const state = owned({ keep: "k", old: { gone: "g" }, manual: "m" });

  it("removes managed keys no longer declared, and nothing written by others", async () => {
    const result = await planFor(spec({ keep: "<uuid>" }, { prune: true }), state, {
      managedKeys: ["keep", "old.gone"],
    });
    assert.deepEqual(result.changes, [{ action: "prune-field", key: "old.gone" }]);
    assert.deepEqual(plain(result.data), { keep: "k", manual: "m" });
    assert.deepEqual(result.managedKeys, ["keep"]);
  });

  it("prunes nothing when the status was lost", async () => {
    const result = await planFor(spec({ keep: "<uuid>" }, { prune: true }), state, {
      managedKeys: undefined,
    });
    assertQuiet(result);
    assert.deepEqual(result.managedKeys, []);
  });

  it("prunes nothing without prune: true, and keeps remembering the key", async () => {
    const result = await planFor(spec({ keep: "<uuid>" }), state, { managedKeys: ["keep", "old.gone"] });
    assertQuiet(result);
    assert.deepEqual(result.managedKeys, ["keep", "old.gone"]);
  });

  it("forgets a managed key a person already removed", async () => {
    const result = await planFor(spec({ keep: "<uuid>" }, { prune: true }), state, {
      managedKeys: ["keep", "vanished"],
    });
    assertQuiet(result);
    assert.deepEqual(result.managedKeys, ["keep"]);
  });

  it("replaces a managed leaf that became a declared map, but never a map already there", async () => {
    const current = owned({ old: "was-a-leaf" });
    const result = await planFor(spec({ old: { inner: "<uuid>" } }, { prune: true }), current, {
      managedKeys: ["old"],
    });
    assert.equal(result.outcome.kind, "ok", result.outcome.message);
    assert.match(String(leaf(result.data, "old.inner")), /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      result.changes.map((c) => `${c.action} ${c.key}`),
      ["prune-field old", "add-field old.inner"],
    );
    assert.deepEqual(result.managedKeys, ["old.inner"]);

    const mapThere = owned({ old: { inner: "typed", other: "kept" } });
    const kept = await planFor(spec({ old: { inner: "<uuid>" } }, { prune: true }), mapThere, {
      managedKeys: ["old"],
    });
    assert.equal(kept.data, null, "nothing to write: the declared key is there");
  });

  it("without prune, a leaf where a map is declared stalls with how to resolve it", async () => {
    const current = owned({ old: "was-a-leaf" });
    const result = await planFor(spec({ old: { inner: "<uuid>" } }), current, { managedKeys: ["old"] });
    assert.equal(result.outcome.kind, "stalled");
    assert.match(result.outcome.message, /remove old from the path by hand, or set prune: true/);
    assert.equal(leaf(result.data ?? current.data, "old"), "was-a-leaf");
  });
});

describe("vault planner: invalid specs and secrecy", () => {
  it("writes nothing for an invalid spec and names the key", async () => {
    const result = await planFor(spec({ a: "<random:0>", "b.c": "x" }), absent);
    assert.equal(result.outcome.kind, "invalid");
    assert.equal(result.outcome.reason, "InvalidSpec");
    assert.equal(
      result.outcome.message,
      'key name "b.c" contains a dot; nest it as a map instead; a: random length must be between 1 and 4096',
    );
    assert.equal(result.data, null);
    assert.equal(result.customMetadata, null);
  });

  it("never puts a value in a message", async () => {
    const refs = new Map([["ohmlab/apps/db#users.app", "copied-secret-value"]]);
    const secretSpec = spec({
      ...keycloak,
      db: "<ref:ohmlab/apps/db#users.app>",
      sops: { key: "<age:secret>", pub: "<age:public>" },
      id: "<uuid>",
      h: "<hex:32>",
    });
    const results: Plan[] = [];
    results.push(await planFor(secretSpec, absent, { refs }));
    const state = applied(absent, results[0]!);
    results.push(
      await planFor({ ...secretSpec, rotate: { token: "x" } }, state, {
        refs: new Map([["ohmlab/apps/db#users.app", "new-secret"]]),
      }),
    );
    const values: string[] = [];
    const collect = (node: unknown): void => {
      if (typeof node === "string" && node.length >= 6) values.push(node);
      else if (node && typeof node === "object") for (const v of Object.values(node)) collect(v);
    };
    for (const result of results) collect(result.data);
    assert.ok(values.length > 10);
    for (const result of results) {
      const text = [
        result.outcome.message,
        summarizeChanges(result.changes),
        JSON.stringify(result.changes),
        result.managedKeys.join(","),
      ].join("\n");
      for (const value of values) assert.ok(!text.includes(value), "a value leaked into a message");
    }
  });
});

describe("vault planner: a chain of references across three paths", () => {
  it("settles in one pass when paths are planned in evaluation order", async () => {
    const specs: VaultSeedSpecInput[] = [
      { path: "kv/c", data: { copy: "<ref:kv/b#copy>" } },
      { path: "kv/b", data: { copy: "<ref:kv/a#root>" } },
      { path: "kv/a", data: { root: "<random:20>" } },
    ];
    const byPath = new Map(specs.map((s) => [s.path, s]));
    const compiled = new Map(specs.map((s) => [s.path, compileSeed(s)]));
    const { order } = analyseRefs(
      specs.map((s) => {
        const c = compiled.get(s.path)!;
        return { path: s.path, dependsOn: c.ok ? c.seed.refs.map((r) => r.path) : [] };
      }),
    );
    assert.deepEqual(order, ["kv/a", "kv/b", "kv/c"]);

    const store = new Map<string, KvState>();
    const pass = async (): Promise<Plan[]> => {
      const plans: Plan[] = [];
      for (const path of order) {
        const c = compiled.get(path)!;
        assert.ok(c.ok);
        const refs = new Map(c.seed.refs.map((r) => [r.id, readRefValue(store.get(r.path)?.data, r.key)]));
        const current = store.get(path) ?? absent;
        const result = await plan({
          object: { namespace: "ns", name: path.replace("/", "-") },
          spec: byPath.get(path)!,
          current,
          refs,
          managedKeys: [],
          generator,
        });
        store.set(path, applied(current, result));
        plans.push(result);
      }
      return plans;
    };

    const first = await pass();
    assert.deepEqual(
      first.map((p) => p.outcome.kind),
      ["ok", "ok", "ok"],
    );
    const root = leaf(store.get("kv/a")!.data, "root");
    assert.equal(leaf(store.get("kv/b")!.data, "copy"), root);
    assert.equal(leaf(store.get("kv/c")!.data, "copy"), root);
    for (const result of await pass()) assert.equal(result.changes.length, 0);
  });
});
