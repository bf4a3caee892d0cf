import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  canSetAt,
  deleteAt,
  flattenTree,
  getAt,
  leafText,
  setAt,
  unflattenTree,
} from "../../src/targets/vault/tree.js";

/** The planner builds prototype-less maps; compare them as the JSON that goes to OpenBao. */
const plain = (value: unknown): unknown => (value == null ? value : JSON.parse(JSON.stringify(value)));

describe("vault tree: flatten", () => {
  it("gives dotted key paths for every string leaf", () => {
    const flat = flattenTree({
      admin: { username: "admin", password: "<random:24>" },
      clients: { "grafana-core": { clientSecret: "<random:32>" } },
      webhook: "",
    });
    assert.deepEqual(flat.problems, []);
    assert.deepEqual(
      [...flat.leaves],
      [
        ["admin.username", "admin"],
        ["admin.password", "<random:24>"],
        ["clients.grafana-core.clientSecret", "<random:32>"],
        ["webhook", ""],
      ],
    );
  });

  it("rejects a key name with a dot and names it", () => {
    const flat = flattenTree({ admin: { "pass.word": "x" } });
    assert.equal(flat.leaves.size, 0);
    assert.deepEqual(flat.problems, [
      { key: "admin.pass.word", message: 'key name "pass.word" contains a dot; nest it as a map instead' },
    ]);
  });

  it("keeps numbers and booleans as plain values and rejects other leaves, naming the key", () => {
    const flat = flattenTree({ port: 8080, list: ["a"], hook: null, on: true, ratio: 0.5 });
    assert.deepEqual(
      flat.problems.map((p) => p.message),
      [
        "list must be a string, a number, a boolean or a map, found a list",
        'hook has no value; write "" for a key filled in by hand',
      ],
    );
    assert.deepEqual(
      [...flat.leaves],
      [
        ["port", 8080],
        ["on", true],
        ["ratio", 0.5],
      ],
    );
  });

  it("rejects data that is not a map and empty key names", () => {
    assert.equal(flattenTree("x").problems[0]?.message, "data must be a map of keys, found a string");
    assert.equal(flattenTree({ a: { "": "x" } }).problems[0]?.message, "a key name under a is empty");
  });

  it("round-trips through unflattenTree", () => {
    const data = { a: { b: "1", c: { d: "2" } }, e: "" };
    assert.deepEqual(plain(unflattenTree(flattenTree(data).leaves)), data);
  });

  it("refuses to unflatten a key that is both a value and a map", () => {
    assert.throws(
      () =>
        unflattenTree([
          ["a", "1"],
          ["a.b", "2"],
        ]),
      /a\.b/,
    );
  });
});

describe("vault tree: access to stored data", () => {
  it("reads nested keys and tells a missing key from an empty one", () => {
    const tree = { a: { b: "", c: 3 } };
    assert.deepEqual(getAt(tree, "a.b"), { found: true, value: "" });
    assert.deepEqual(getAt(tree, "a.x"), { found: false, value: undefined });
    assert.deepEqual(getAt(tree, "a.b.c"), { found: false, value: undefined });
    assert.equal(leafText(getAt(tree, "a.c").value), "3");
    assert.equal(leafText({}), undefined);
  });

  it("creates maps on the way and refuses to replace a value with a map", () => {
    const tree: Record<string, unknown> = { a: "kept" };
    assert.equal(setAt(tree, "x.y.z", "1"), true);
    assert.deepEqual(plain(tree.x), { y: { z: "1" } });
    assert.equal(canSetAt(tree, "a.b"), false);
    assert.equal(setAt(tree, "a.b", "2"), false);
    assert.equal(tree.a, "kept");
    assert.equal(setAt(tree, "a.a.b", "x"), false);
  });

  it("keeps segments with repeated names apart", () => {
    const tree = {};
    assert.equal(setAt(tree, "a.a.b", "x"), true);
    assert.deepEqual(plain(tree), { a: { a: { b: "x" } } });
  });

  it("removes maps a deletion leaves empty, and only those", () => {
    const tree = { a: { b: { c: "1" } }, d: { e: "1", f: "2" } };
    assert.equal(deleteAt(tree, "a.b.c"), true);
    assert.equal(deleteAt(tree, "d.e"), true);
    assert.equal(deleteAt(tree, "d.missing"), false);
    assert.deepEqual(plain(tree), { d: { f: "2" } });
  });
});
