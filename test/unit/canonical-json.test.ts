import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canonicalJson } from "../../src/runtime/canonical-json.js";

describe("canonical JSON", () => {
  it("sorts members at every depth by UTF-16 code units and leaves undefined members out", () => {
    const a = { b: [{ z: 1, a: "x" }], a: null, é: true, A: undefined };
    assert.equal(canonicalJson(a), '{"a":null,"b":[{"a":"x","z":1}],"é":true}');
    assert.equal(canonicalJson({ "\u{1F600}": 1, "\uFFFF": 2 }), '{"\u{1F600}":1,"\uFFFF":2}');
  });

  it("refuses what JSON cannot hold unless loose, where it writes null as JSON.stringify does", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, undefined, () => 1]) {
      assert.throws(() => canonicalJson([bad]), /has no JSON form/);
      assert.equal(canonicalJson([bad], { loose: true }), JSON.stringify([bad]));
    }
    assert.equal(canonicalJson(undefined, { loose: true }), "null");
    assert.equal(canonicalJson({ n: Number.NaN, u: undefined }, { loose: true }), '{"n":null}');
  });

  it("gives equal keys to equal values whatever their key order, in both modes", () => {
    const one = { spec: { x: [1, 2], y: { q: "a", p: "b" } }, meta: 3 };
    const two = { meta: 3, spec: { y: { p: "b", q: "a" }, x: [1, 2] } };
    assert.equal(canonicalJson(one), canonicalJson(two));
    assert.equal(canonicalJson(one, { loose: true }), canonicalJson(two, { loose: true }));
    assert.notEqual(canonicalJson({ x: [1, 2] }), canonicalJson({ x: [2, 1] }));
  });
});
