import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Condition } from "../../src/runtime/conditions.js";
import { isOlder, StatusWriter, sameStatus } from "../../src/runtime/status.js";
import type { KubeObject } from "../../src/runtime/types.js";

type Obj = KubeObject & { status?: { keys?: string[]; conditions?: Condition[]; other?: string } };

const obj = (rv: string, keys?: string[], uid = "u1"): Obj => ({
  apiVersion: "example.dev/v1",
  kind: "Thing",
  metadata: { name: "x", namespace: "ns", uid, resourceVersion: rv },
  status: keys ? { keys } : undefined,
});

// freshest and remember are the writer's memory only: no request is made, so no client is needed.
const writer = () =>
  new StatusWriter<Obj["status"]>({
    client: undefined as never,
    type: { group: "example.dev", version: "v1", kind: "Thing", plural: "things", namespaced: true },
    fieldManager: "test",
    plane: (s) => ({ keys: s?.keys, conditions: s?.conditions }),
  });

const cond = (type: string, status: Condition["status"]): Condition => ({
  type,
  status,
  reason: "R",
  message: "m",
  lastTransitionTime: "2026-01-01T00:00:00Z",
});

describe("runtime status writer", () => {
  it("a cached copy older than the status it wrote gets that status; a newer cache or another uid wins", () => {
    const w = writer();
    w.remember("ns/x", obj("20", ["a", "b"]));
    assert.deepEqual(w.freshest("ns/x", obj("19")).status?.keys, ["a", "b"]);
    assert.deepEqual(w.freshest("ns/x", obj("21", ["a"])).status?.keys, ["a"], "a newer cache wins");
    assert.equal(w.freshest("ns/x", obj("19")).status, undefined, "once caught up, the memory is dropped");
    w.remember("ns/x", obj("30", ["a"]));
    assert.equal(
      w.freshest("ns/x", obj("5", undefined, "u2")).status,
      undefined,
      "another object of that name",
    );
  });

  it("compares resourceVersions as integers, and calls nothing else older", () => {
    assert.equal(isOlder("9", "10"), true);
    assert.equal(isOlder("10", "9"), false);
    assert.equal(isOlder("10", "10"), false);
    assert.equal(isOlder("abc", "10"), false);
    assert.equal(isOlder(undefined, "10"), false);
  });

  it("one equality: key order, undefined and condition order aside; anything else is a change", () => {
    assert.ok(sameStatus({ a: 1, b: { c: 2, d: undefined } }, { b: { c: 2 }, a: 1 }));
    assert.ok(sameStatus(undefined, {}));
    assert.ok(
      sameStatus(
        { conditions: [cond("A", "True"), cond("B", "False")] },
        { conditions: [cond("B", "False"), cond("A", "True")] },
      ),
    );
    assert.ok(!sameStatus({ conditions: [cond("A", "True")] }, { conditions: [cond("A", "False")] }));
    assert.ok(!sameStatus({ list: [1, 2] }, { list: [2, 1] }), "list order of other fields counts");
    assert.ok(!sameStatus({ a: 1 }, { a: 1, b: 0 }));
  });

  it("compares only the concern's plane: another writer's fields never make a write look due", () => {
    const w = writer();
    assert.equal(w.changes({ keys: ["a"], other: "theirs" }, { keys: ["a"] }), false);
    assert.equal(w.changes({ keys: ["a"] }, { keys: ["a", "b"] }), true);
    assert.equal(w.changes(undefined, { keys: ["a"] }), true);
  });
});
