import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Value } from "@sinclair/typebox/value";
import { ConditionSchema, type Condition as SchemaCondition } from "../../src/apis/common.js";
import { VaultSeedReason } from "../../src/apis/vaultseed-names.js";
import { type Condition as RuntimeCondition, setCondition } from "../../src/runtime/conditions.js";

// The runtime may not import src/apis and the reverse (layers), so the two declarations are held
// to one type here: if either drifts, this file stops compiling and `npm test` fails at `tsc`.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const sameType: Equal<SchemaCondition, RuntimeCondition> = true;

describe("one condition type for the schemas and the runtime", () => {
  it("is the same type at compile time", () => {
    assert.equal(sameType, true);
  });

  it("what setCondition produces is valid against the CRD's condition schema", () => {
    const list = setCondition(
      [],
      {
        type: "Ready",
        status: "False",
        reason: VaultSeedReason.BackendUnavailable,
        message: "x".repeat(40_000),
        observedGeneration: 3,
      },
      new Date("2026-01-01T00:00:00.500Z"),
    );
    const errors = [...Value.Errors(ConditionSchema, list[0])].map((e) => `${e.path}: ${e.message}`);
    assert.deepEqual(errors, []);
  });
});
