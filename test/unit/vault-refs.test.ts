import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { analyseRefs, parseRefTarget, parseSeedPath, readRefValue } from "../../src/targets/vault/refs.js";

describe("vault refs: paths and targets", () => {
  it("splits a path into mount and secret path", () => {
    assert.deepEqual(parseSeedPath("ohmlab/platforms/production/core/keycloak"), {
      ok: true,
      value: { mount: "ohmlab", subPath: "platforms/production/core/keycloak" },
    });
  });

  it("rejects paths without a mount and a path", () => {
    for (const [path, message] of [
      ["", "path is empty; it needs <mount>/<path>"],
      ["ohmlab", "path needs <mount>/<path>"],
      ["/ohmlab/x", "path has an empty segment (leading, trailing or doubled /)"],
      ["ohmlab/x/", "path has an empty segment (leading, trailing or doubled /)"],
      ["ohmlab/../x", "path must not contain . or .. segments"],
      ["ohmlab/a b", "path must not contain whitespace"],
      ["ohmlab/a#b", "path must not contain #"],
    ] as const) {
      assert.deepEqual(parseSeedPath(path), { ok: false, message }, path);
    }
  });

  it("parses a reference target", () => {
    assert.deepEqual(parseRefTarget("kv/apps/db#users.app"), {
      ok: true,
      value: { id: "kv/apps/db#users.app", path: "kv/apps/db", key: "users.app" },
    });
  });

  it("reads the value a reference copies", () => {
    const data = { users: { app: "pw", count: 3, nested: { x: "y" } }, empty: "" };
    assert.equal(readRefValue(data, "users.app"), "pw");
    assert.equal(readRefValue(data, "users.count"), "3");
    assert.equal(readRefValue(data, "users.nested"), undefined);
    assert.equal(readRefValue(data, "empty"), "");
    assert.equal(readRefValue(data, "missing"), undefined);
    assert.equal(readRefValue(undefined, "users.app"), undefined);
  });
});

describe("vault refs: graph", () => {
  it("orders a chain across three paths so sources come first", () => {
    const analysis = analyseRefs([
      { path: "kv/c", dependsOn: ["kv/b"] },
      { path: "kv/b", dependsOn: ["kv/a"] },
      { path: "kv/a", dependsOn: ["kv/outside"] },
    ]);
    assert.deepEqual(analysis.order, ["kv/a", "kv/b", "kv/c"]);
    assert.deepEqual(analysis.cycles, []);
  });

  it("places a path after every source of a diamond", () => {
    const analysis = analyseRefs([
      { path: "kv/top", dependsOn: ["kv/left", "kv/right"] },
      { path: "kv/left", dependsOn: ["kv/base"] },
      { path: "kv/right", dependsOn: ["kv/left"] },
      { path: "kv/base", dependsOn: [] },
    ]);
    assert.deepEqual(analysis.order, ["kv/base", "kv/left", "kv/right", "kv/top"]);
  });

  it("finds cycles, lists their paths, and puts them and what follows them last", () => {
    const analysis = analyseRefs([
      { path: "kv/x", dependsOn: ["kv/y"] },
      { path: "kv/y", dependsOn: ["kv/z"] },
      { path: "kv/z", dependsOn: ["kv/x"] },
      { path: "kv/after", dependsOn: ["kv/x"] },
      { path: "kv/free", dependsOn: [] },
      { path: "kv/self", dependsOn: ["kv/self"] },
    ]);
    assert.deepEqual(analysis.cycles.sort(), [["kv/self"], ["kv/x", "kv/y", "kv/z"]]);
    assert.deepEqual(analysis.cycleOf.get("kv/y"), ["kv/x", "kv/y", "kv/z"]);
    assert.equal(analysis.cycleOf.has("kv/after"), false);
    assert.deepEqual(analysis.order, ["kv/free", "kv/after", "kv/self", "kv/x", "kv/y", "kv/z"]);
  });

  it("handles a long chain without deep recursion", () => {
    const nodes = Array.from({ length: 20_000 }, (_, i) => ({
      path: `kv/p${i}`,
      dependsOn: i === 0 ? [] : [`kv/p${i - 1}`],
    }));
    const analysis = analyseRefs(nodes.reverse());
    assert.equal(analysis.order[0], "kv/p0");
    assert.equal(analysis.order[19_999], "kv/p19999");
    assert.deepEqual(analysis.cycles, []);
  });
});
