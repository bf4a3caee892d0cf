import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countByAction, type PlanChange, summarizeChanges } from "../../src/targets/vault/plan-summary.js";

describe("vault plan summary", () => {
  it("writes the Drifted message of the documentation's example", () => {
    const changes: PlanChange[] = [
      { action: "update-field", key: "keycloak.clientSecret" },
      { action: "adopt" },
    ];
    assert.equal(summarizeChanges(changes), "1 adopt, 1 update-field (keycloak.clientSecret)");
  });

  it("orders actions by a fixed list and keys by name", () => {
    const changes: PlanChange[] = [
      { action: "record-rotation" },
      { action: "rotate-field", key: "b" },
      { action: "add-field", key: "z" },
      { action: "prune-field", key: "old" },
      { action: "add-field", key: "a" },
      { action: "rotate-field", key: "a" },
      { action: "create-path" },
    ];
    assert.equal(
      summarizeChanges(changes),
      "1 create-path, 2 add-field (a, z), 2 rotate-field (a, b), 1 prune-field (old), 1 record-rotation",
    );
    assert.deepEqual(
      [...countByAction(changes)],
      [
        ["create-path", 1],
        ["add-field", 2],
        ["rotate-field", 2],
        ["prune-field", 1],
        ["record-rotation", 1],
      ],
    );
  });

  it("is empty for no changes", () => {
    assert.equal(summarizeChanges([]), "");
  });

  it("caps the keys it names per action", () => {
    const changes: PlanChange[] = Array.from({ length: 25 }, (_, i) => ({
      action: "add-field",
      key: `k${String(i).padStart(2, "0")}`,
    }));
    const summary = summarizeChanges(changes);
    assert.match(summary, /^25 add-field \(k00, k01, .*k19, and 5 more\)$/);
  });
});
