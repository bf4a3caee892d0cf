// Issue 9, item 1, property-based through the real parts: random trees with hostile key names go
// through flatten and plan, are written to the real OpenBao, read back, and must come back exactly
// as declared; planning against what was read back is quiet; no prototype is touched.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import type { KubeClient } from "../../src/runtime/client.js";
import { createGenerator } from "../../src/targets/vault/generate.js";
import type { KvClient } from "../../src/targets/vault/kv.js";
import { plan } from "../../src/targets/vault/planner.js";
import { flattenTree } from "../../src/targets/vault/tree.js";
import { canonical, hostileTree, prototypeNames } from "../support/hostile-trees.js";
import { vaultSuite } from "../support/vault.js";

describe("hostile trees through flatten, plan, OpenBao write and read-back (property-based)", () => {
  let client: KubeClient;
  let ns: string;
  let kv: KvClient;
  const generator = createGenerator({ bcryptCost: 4 });

  before(async () => {
    ({ client, ns, kv } = await vaultSuite("vs-props"));
  });
  after(() => client.close());

  it("stores every tree exactly and reads it back unchanged", async () => {
    const before = prototypeNames();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(hostileTree(3, 4), async (tree) => {
        const path = `secret/${ns}/prop-${run++}`;
        const object = { namespace: ns, name: `prop-${run}` };
        const spec = { path, data: tree };
        const current = await kv.read(path);
        const first = await plan({ object, spec, current, refs: new Map(), managedKeys: [], generator });
        assert.equal(first.outcome.kind, "ok", first.outcome.message);
        assert.ok(first.data, "a new path is written");
        const version = await kv.write(path, first.data, first.expectedVersion);
        await kv.writeMetadata(path, first.customMetadata!);
        const back = await kv.read(path);
        assert.equal(back.version, version);
        assert.equal(canonical(back.data), canonical(tree), "OpenBao holds exactly the declared tree");
        assert.deepEqual(
          [...flattenTree(back.data).leaves].map(([k, v]) => [k, v]).sort(),
          [...flattenTree(tree).leaves].map(([k, v]) => [k, v]).sort(),
        );
        const again = await plan({
          object,
          spec,
          current: back,
          refs: new Map(),
          managedKeys: first.managedKeys,
          generator,
        });
        assert.deepEqual(again.changes, [], "planning against the read-back tree changes nothing");
      }),
      { numRuns: 60 },
    );
    assert.deepEqual(prototypeNames(), before);
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
  });
});
