import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { selectForDeletion } from "../../src/targets/openbao/adminops/backup/retention.js";

const now = new Date("2026-12-10T00:00:00Z");
const snap = (day: number) => ({
  key: `p/ns/bao/202612${String(day).padStart(2, "0")}T030000Z-abcd1234.snap`,
  lastModified: new Date(`2026-12-${String(day).padStart(2, "0")}T03:01:00Z`),
});
const objects = [1, 2, 3, 4, 5, 6, 7, 8, 9].map(snap);
const newest = objects[8]!.key;

describe("backup retention", () => {
  it("keeps the newest maxCount snapshots", () => {
    const out = selectForDeletion({ objects, policy: { maxCount: 3 }, now, lastSuccessKey: newest });
    assert.deepEqual(
      out,
      objects
        .slice(0, 6)
        .map((o) => o.key)
        .reverse(),
    );
  });

  it("deletes snapshots older than maxAge", () => {
    const out = selectForDeletion({ objects, policy: { maxAge: "72h" }, now, lastSuccessKey: newest });
    // Days 1..6 at 03:01 are more than 72h before the 10th at 00:00; day 7 is 68h59m old.
    assert.deepEqual(
      out.sort(),
      objects
        .slice(0, 6)
        .map((o) => o.key)
        .sort(),
    );
  });

  it("deletes nothing without a recorded success, and never the last success", () => {
    assert.deepEqual(
      selectForDeletion({ objects, policy: { maxCount: 1 }, now, lastSuccessKey: undefined }),
      [],
    );
    const oldest = objects[0]!.key;
    const out = selectForDeletion({
      objects,
      policy: { maxCount: 1, maxAge: "1h" },
      now,
      lastSuccessKey: oldest,
    });
    assert.ok(!out.includes(oldest));
    assert.equal(out.length, 8);
  });

  it("leaves files that are not snapshots, and does nothing with no limits", () => {
    const mixed = [
      ...objects,
      { key: "p/ns/bao/README.txt", lastModified: new Date("2020-01-01T00:00:00Z") },
    ];
    const out = selectForDeletion({ objects: mixed, policy: { maxAge: "1h" }, now, lastSuccessKey: newest });
    assert.ok(!out.includes("p/ns/bao/README.txt"));
    assert.deepEqual(
      selectForDeletion({ objects, policy: { maxCount: 0 }, now, lastSuccessKey: newest }),
      [],
    );
    assert.deepEqual(selectForDeletion({ objects, policy: undefined, now, lastSuccessKey: newest }), []);
  });

  it("a bad maxAge names the field", () => {
    assert.throws(
      () => selectForDeletion({ objects, policy: { maxAge: "soon" }, now, lastSuccessKey: newest }),
      /spec\.backup\.retention\.maxAge/,
    );
  });
});
