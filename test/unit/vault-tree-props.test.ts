// Property-based tests of the tree helpers and the planner over random trees with hostile key
// names (issue 9, item 1): user keys are plain data everywhere, nothing reaches a prototype.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createGenerator, deterministicRandom } from "../../src/targets/vault/generate.js";
import { OWNER_MARKER_KEY, plan } from "../../src/targets/vault/planner.js";
import { deleteAt, flattenTree, getAt, setAt, unflattenTree } from "../../src/targets/vault/tree.js";
import { canonical, hostileTree, keyName, plainLeaf, prototypeNames } from "../support/hostile-trees.js";

const generator = createGenerator({ random: deterministicRandom("props"), bcryptCost: 4 });
const object = { namespace: "ns", name: "obj" };

describe("VaultSeed trees with hostile key names (property-based)", () => {
  it("flatten then unflatten gives the same tree, and touches no prototype", () => {
    const before = prototypeNames();
    fc.assert(
      fc.property(hostileTree(), (tree) => {
        const flat = flattenTree(tree);
        assert.deepEqual(flat.problems, []);
        const back = unflattenTree(flat.leaves);
        assert.equal(canonical(back), canonical(tree));
        for (const [key, value] of flat.leaves) {
          const found = getAt(back, key);
          assert.ok(found.found, key);
          assert.equal(found.value, value);
        }
      }),
      { numRuns: 300 },
    );
    assert.deepEqual(prototypeNames(), before);
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  });

  it("setAt, getAt and deleteAt treat every segment as an own key", () => {
    const before = prototypeNames();
    fc.assert(
      fc.property(fc.array(keyName, { minLength: 1, maxLength: 4 }), plainLeaf, (segments, value) => {
        const tree = JSON.parse("{}");
        const key = segments.join(".");
        assert.equal(
          getAt(tree, key).found,
          false,
          "nothing is found on an empty tree, not even a prototype",
        );
        assert.ok(setAt(tree, key, value));
        assert.equal(getAt(tree, key).value, value);
        // The tree survives a JSON round trip as the KV payload does.
        const wire = JSON.parse(JSON.stringify(tree));
        assert.equal(getAt(wire, key).value, value);
        assert.ok(deleteAt(tree, key));
        assert.equal(Object.keys(tree).length, 0, "deleting the only leaf empties the tree");
      }),
      { numRuns: 500 },
    );
    assert.deepEqual(prototypeNames(), before);
  });

  it("a plan seeds a hostile tree exactly, and planning again against its result is quiet", async () => {
    const before = prototypeNames();
    await fc.assert(
      fc.asyncProperty(hostileTree(), async (tree) => {
        const spec = { path: "secret/x/y", data: tree };
        const first = await plan({
          object,
          spec,
          current: { exists: false, version: 0, data: {}, customMetadata: {} },
          refs: new Map(),
          managedKeys: [],
          generator,
        });
        assert.equal(first.outcome.kind, "ok", first.outcome.message);
        assert.equal(canonical(first.data), canonical(tree));
        const stored = JSON.parse(JSON.stringify(first.data));
        assert.equal(Object.hasOwn(stored, "__proto__"), Object.hasOwn(tree, "__proto__"));
        const again = await plan({
          object,
          spec,
          current: {
            exists: true,
            version: 1,
            data: stored,
            customMetadata: { [OWNER_MARKER_KEY]: "ns/obj" },
          },
          refs: new Map(),
          managedKeys: first.managedKeys,
          generator,
        });
        assert.deepEqual(again.changes, [], "a second pass changes nothing");
        assert.equal(again.data, null);
        assert.deepEqual(again.managedKeys, first.managedKeys);
      }),
      { numRuns: 200 },
    );
    assert.deepEqual(prototypeNames(), before);
  });
});
