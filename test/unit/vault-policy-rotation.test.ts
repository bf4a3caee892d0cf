// Issue 28, items 2 and 3 in the planner and the checks: <policy:NAME> and rotate.every.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGenerator, deterministicRandom } from "../../src/targets/vault/generate.js";
import { summarizeChanges } from "../../src/targets/vault/plan-summary.js";
import {
  type KvState,
  nextRotationAt,
  OWNER_MARKER_KEY,
  type Plan,
  type PlanInput,
  plan,
  ROTATION_PERIOD_KEY,
  type VaultSeedSpecInput,
} from "../../src/targets/vault/planner.js";
import { parseLeaf } from "../../src/targets/vault/templates.js";
import { getAt } from "../../src/targets/vault/tree.js";
import { compileSeed, validateDocuments } from "../../src/targets/vault/validate.js";

const object = { namespace: "platform", name: "app" };
const OWNER = "platform/app";
const HOUR = 3_600_000;
const T0 = Date.parse("2026-01-01T00:00:00Z");

/** A policy generator that counts its calls: a quiet pass must make none. */
function counting() {
  const calls: string[] = [];
  const generator = createGenerator({
    random: deterministicRandom("policy-rotation"),
    bcryptCost: 4,
    policy: async (name) => {
      calls.push(name);
      return `${name}-value-${calls.length}`;
    },
  });
  return { generator, calls };
}

const absent: KvState = { exists: false, version: 0, data: {}, customMetadata: {} };

function spec(data: Record<string, unknown>, rotate?: VaultSeedSpecInput["rotate"]): VaultSeedSpecInput {
  return { path: "secret/platform/app", data, ...(rotate ? { rotate } : {}) };
}

function applied(current: KvState, result: Plan): KvState {
  return {
    exists: current.exists || result.data !== null,
    version: result.data !== null ? current.version + 1 : current.version,
    data: result.data ?? current.data,
    customMetadata: result.customMetadata ?? current.customMetadata,
  };
}

const leaf = (state: KvState, key: string) => getAt(state.data, key).value;

describe("<policy:NAME>", () => {
  it("parses the form and refuses a bad one, naming the problem", () => {
    assert.deepEqual(parseLeaf("<policy:db-strong>"), {
      ok: true,
      template: { kind: "policy", name: "db-strong" },
    });
    assert.match((parseLeaf("<policy>") as { message: string }).message, /needs the name/);
    assert.match((parseLeaf("<policy:>") as { message: string }).message, /needs the name/);
    assert.match((parseLeaf("<policy:a/b>") as { message: string }).message, /letters, digits/);
    assert.match((parseLeaf("<policy:../x>") as { message: string }).message, /letters, digits/);
    assert.match((parseLeaf(`<policy:${"x".repeat(129)}>`) as { message: string }).message, /at most 128/);
    const problems = validateDocuments([
      {
        file: "a.yaml",
        doc: {
          apiVersion: "ohmlab.fr/v1alpha1",
          kind: "VaultSeed",
          metadata: { name: "a", namespace: "ns" },
          spec: { path: "secret/a", data: { good: "<policy:strong>", bad: "<policy:a b>" } },
        },
      },
    ]);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.key, "bad");
  });

  it("asks the policy once per key, never on a quiet pass, and again on rotation", async () => {
    const { generator, calls } = counting();
    const s = spec({ db: { password: "<policy:strong>" }, other: "<random:8>" });
    const first = await plan({
      object,
      spec: s,
      current: absent,
      refs: new Map(),
      managedKeys: [],
      generator,
    });
    assert.deepEqual(calls, ["strong"]);
    assert.equal(first.outcome.kind, "ok");
    const seeded = applied(absent, first);
    assert.equal(leaf(seeded, "db.password"), "strong-value-1");
    assert.deepEqual(first.managedKeys, ["db.password", "other"]);

    const quiet = await plan({
      object,
      spec: s,
      current: seeded,
      refs: new Map(),
      managedKeys: first.managedKeys,
      generator,
    });
    assert.deepEqual(quiet.changes, []);
    assert.equal(quiet.data, null);
    assert.deepEqual(calls, ["strong"], "a quiet pass asks nothing");

    const rotated = await plan({
      object,
      spec: { ...s, rotate: { token: "t1", keys: ["db.password"] } },
      current: seeded,
      refs: new Map(),
      managedKeys: first.managedKeys,
      generator,
    });
    assert.equal(summarizeChanges(rotated.changes), "1 rotate-field (db.password), 1 record-rotation");
    assert.equal(leaf(applied(seeded, rotated), "db.password"), "strong-value-2");
  });

  it("is a generated key for rotate.keys", () => {
    const c = compileSeed(spec({ p: "<policy:x>" }, { token: "t", keys: ["p"] }));
    assert.equal(c.ok, true);
  });
});

describe("rotate.every", () => {
  const data = { a: "<random:16>", b: "<hex:8>", lit: "x" };
  const every = (e: string, keys?: string[]) => spec(data, { every: e, ...(keys ? { keys } : {}) });

  // One generator for the whole suite: a rotated value must differ from the seeded one.
  const { generator } = counting();
  async function planAt(
    s: VaultSeedSpecInput,
    current: KvState,
    nowMs: number,
    more: Partial<PlanInput> = {},
  ): Promise<Plan> {
    return plan({
      object,
      spec: s,
      current,
      refs: new Map(),
      managedKeys: ["a", "b", "lit"],
      generator,
      now: new Date(nowMs),
      ...more,
    });
  }

  it("checks the period's form", () => {
    for (const bad of ["90d", "1.5h", "", "h", "59m", "-1h", 3600])
      assert.equal(compileSeed(spec(data, { every: bad as string })).ok, false, String(bad));
    const c = compileSeed(spec(data, { every: "2160h" }));
    assert.ok(c.ok && c.seed.rotate?.everyMs === 2160 * HOUR);
    const problems = compileSeed(spec(data, { every: "90d" }));
    assert.ok(!problems.ok && /spec\.rotate\.every must be a duration/.test(problems.problems[0]!.message));
    assert.equal(compileSeed(spec(data, { every: "30m" })).ok, false);
  });

  it("starts the period on a new path without rotating, then rotates once per period", async () => {
    const s = every("24h", ["a"]);
    const first = await planAt(s, absent, T0);
    assert.equal(
      summarizeChanges(first.changes),
      "1 create-path, 3 add-field (a, b, lit), 1 start-rotation-period",
    );
    const seeded = applied(absent, first);
    assert.equal(seeded.customMetadata[ROTATION_PERIOD_KEY], new Date(T0).toISOString());
    assert.equal(
      nextRotationAt({ rotate: { everyMs: 24 * HOUR, keys: [] } }, seeded.customMetadata, T0),
      T0 + 24 * HOUR,
    );

    // Within the period: nothing, however often it is asked (a restart, a resync).
    for (const t of [T0 + 1, T0 + 12 * HOUR, T0 + 24 * HOUR - 1]) {
      const quiet = await planAt(s, seeded, t);
      assert.deepEqual(quiet.changes, [], `at +${(t - T0) / HOUR}h`);
      assert.equal(quiet.customMetadata, null);
    }

    // Past it: the listed key once, and the new period starts at this pass.
    const due = T0 + 24 * HOUR + 5 * 60_000;
    const rot = await planAt(s, seeded, due);
    assert.equal(summarizeChanges(rot.changes), "1 rotate-field (a), 1 record-rotation");
    const after = applied(seeded, rot);
    assert.notEqual(leaf(after, "a"), leaf(seeded, "a"));
    assert.equal(leaf(after, "b"), leaf(seeded, "b"));
    assert.equal(after.customMetadata[ROTATION_PERIOD_KEY], new Date(due).toISOString());
    assert.equal(after.customMetadata[OWNER_MARKER_KEY], OWNER);
    assert.deepEqual((await planAt(s, after, due + HOUR)).changes, []);
  });

  it("rotates once, not once per missed period, after a long outage", async () => {
    const seeded = applied(absent, await planAt(every("1h"), absent, T0));
    const late = T0 + 10 * HOUR;
    const rot = await planAt(every("1h"), seeded, late);
    assert.equal(summarizeChanges(rot.changes), "2 rotate-field (a, b), 1 record-rotation");
    assert.deepEqual((await planAt(every("1h"), applied(seeded, rot), late + 1)).changes, []);
  });

  it("starts a period, rotating nothing, on a path that records none or an unreadable one", async () => {
    const seeded = applied(absent, await planAt(spec(data), absent, T0));
    for (const recorded of [undefined, "not a date", new Date(T0 + 1000 * HOUR).toISOString()]) {
      const state =
        recorded === undefined
          ? seeded
          : { ...seeded, customMetadata: { ...seeded.customMetadata, [ROTATION_PERIOD_KEY]: recorded } };
      const p = await planAt(every("24h"), state, T0 + HOUR);
      assert.equal(summarizeChanges(p.changes), "1 start-rotation-period", String(recorded));
      assert.equal(p.data, null, "no data version");
      assert.equal(p.customMetadata![ROTATION_PERIOD_KEY], new Date(T0 + HOUR).toISOString());
    }
  });

  it("works next to the token: each triggers on its own", async () => {
    const s = spec(data, { token: "t1", every: "24h", keys: ["b"] });
    const seeded = applied(absent, await planAt(s, absent, T0));
    assert.deepEqual((await planAt(s, seeded, T0 + HOUR)).changes, []);
    const byToken = await planAt({ ...s, rotate: { ...s.rotate, token: "t2" } }, seeded, T0 + HOUR);
    assert.equal(summarizeChanges(byToken.changes), "1 rotate-field (b), 1 record-rotation");
    assert.equal(
      byToken.customMetadata![ROTATION_PERIOD_KEY],
      new Date(T0).toISOString(),
      "the period is not restarted",
    );
    const byPeriod = await planAt(s, seeded, T0 + 25 * HOUR);
    assert.equal(summarizeChanges(byPeriod.changes), "1 rotate-field (b), 1 record-rotation");
  });
});
