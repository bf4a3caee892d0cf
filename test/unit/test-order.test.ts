import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { mergeDurations, readDurations, slowestFirst } from "../../src/testenv/test-order.js";

describe("test file order", () => {
  const root = "/r/dist/test";
  const files = ["unit/a.test.js", "unit/b.test.js", "integration/c.test.js", "integration/d.test.js"].map(
    (f) => `${root}/${f}`,
  );

  it("starts never-timed files first, then the slowest, keeping the given order among equals", () => {
    const order = slowestFirst(files, root, {
      "unit/a.test.js": 1,
      "unit/b.test.js": 1,
      "integration/c.test.js": 300,
    });
    assert.deepEqual(
      order.map((f) => f.slice(root.length + 1)),
      ["integration/d.test.js", "integration/c.test.js", "unit/a.test.js", "unit/b.test.js"],
    );
    assert.deepEqual(slowestFirst(files, root, {}), files, "no timings: the given order");
  });

  it("keeps earlier timings, takes this run's, ignores files outside the root and bad reports", () => {
    const dir = mkdtempSync(join(tmpdir(), "test-order-"));
    try {
      const kept = join(dir, "sub", "durations.json");
      assert.deepEqual(readDurations(kept), {}, "none yet");
      mergeDurations(
        kept,
        JSON.stringify({ [`${root}/unit/a.test.js`]: 2, "/elsewhere/x.test.js": 9 }),
        root,
      );
      mergeDurations(kept, JSON.stringify({ [`${root}/integration/c.test.js`]: 120.5 }), root);
      assert.deepEqual(readDurations(kept), { "unit/a.test.js": 2, "integration/c.test.js": 120.5 });
      assert.deepEqual(mergeDurations(kept, "not json", root), readDurations(kept));
      writeFileSync(kept, '{"unit/a.test.js": "slow", "unit/b.test.js": 3}');
      assert.deepEqual(readDurations(kept), { "unit/b.test.js": 3 }, "a non-number is dropped");
      writeFileSync(kept, "[1,2]");
      assert.deepEqual(readDurations(kept), {});
      assert.ok(readFileSync(kept, "utf8").length > 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
