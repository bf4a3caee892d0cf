import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { GitLabCoreReason } from "../../src/apis/gitlabcore-names.js";
import { OpenBaoClusterReason, type OpenBaoClusterReasonType } from "../../src/apis/openbaocluster-names.js";
import { OpenBaoRestoreReason } from "../../src/apis/openbaorestore-names.js";
import { VaultSeedReason, type VaultSeedReasonType } from "../../src/apis/vaultseed-names.js";
import type { ConditionInput, KindReason } from "../../src/runtime/conditions.js";
import type { EventInput } from "../../src/runtime/events.js";

const repo = join(fileURLToPath(import.meta.url), "../../../..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

// A reason written at the call site as a string: `reason: "X"`, `reason === "X"`, or either side of
// a conditional that picks one. Job and API condition reasons compared elsewhere use other names.
const LITERAL_REASON = [
  /\breason(?::|\s*[!=]==)\s*"[A-Z][A-Za-z]*"/,
  /\breason:\s*[^?\n;]+\?\s*"[A-Z][A-Za-z]*"\s*:/,
];

/** Every place in `text` a reason is spelled out as a literal, as "line: text". */
export function literalReasons(text: string): string[] {
  return text
    .split("\n")
    .map((line, i) => ({ line, n: i + 1 }))
    .filter(({ line }) => !line.trim().startsWith("//") && !line.trim().startsWith("*"))
    .filter(({ line }) => LITERAL_REASON.some((re) => re.test(line)))
    .map(({ line, n }) => `${n}: ${line.trim()}`);
}

// Checked by the type checker when the tests build: each `@ts-expect-error` line must fail to
// compile, so a reason spelled as a string, or taken from another kind, is refused.
const fromTable: OpenBaoClusterReasonType = OpenBaoClusterReason.OperationLockHeld;
// @ts-expect-error a literal is no kind's reason, even when it spells a table's value
const literal: OpenBaoClusterReasonType = "OperationLockHeld";
// @ts-expect-error the restore's reason of the same value is not the cluster's
const foreign: OpenBaoClusterReasonType = OpenBaoRestoreReason.OperationLockHeld;
// @ts-expect-error nor is a GitLabCore reason a VaultSeed one
const otherTarget: VaultSeedReasonType = GitLabCoreReason.ApplyFailed;
// The runtime (which may not import the tables) accepts any table's reason and no bare string.
const anyTable: KindReason = VaultSeedReason.Reconciled;
const condition: ConditionInput<VaultSeedReasonType> = {
  type: "Ready",
  status: "True",
  // @ts-expect-error a condition's reason comes from its kind's table
  reason: "Reconciled",
  message: "",
};
const event: EventInput = {
  type: "Normal",
  // @ts-expect-error so does an event's
  reason: "Reconciled",
  action: "Reconcile",
  note: "",
};

describe("reasons come from one named set per kind", () => {
  it("a table's reasons are the same strings at run time (alerts match on them)", () => {
    assert.deepEqual(
      [fromTable, literal, foreign, otherTarget, anyTable, condition.reason, event.reason],
      [
        "OperationLockHeld",
        "OperationLockHeld",
        "OperationLockHeld",
        "ApplyFailed",
        "Reconciled",
        "Reconciled",
        "Reconciled",
      ],
    );
  });

  it("finds the shapes it guards against", () => {
    assert.equal(literalReasons('  reason: "InvalidSpec",').length, 1);
    assert.equal(literalReasons('if (c.reason === "Initializing") return').length, 1);
    assert.equal(literalReasons('reason: ok ? "AllReplicasReady" : R.NotReady,').length, 1);
    assert.equal(literalReasons("reason: R.InvalidSpec,").length, 0);
    assert.equal(literalReasons('// reason: "InvalidSpec" in a comment').length, 0);
  });

  it("no target writes a condition or event reason as a string literal", () => {
    const found = sources(join(repo, "src/targets")).flatMap((file) =>
      literalReasons(readFileSync(file, "utf8")).map((hit) => `${relative(repo, file)}:${hit}`),
    );
    assert.deepEqual(found, [], `use the kind's reason constants (src/apis):\n${found.join("\n")}`);
  });
});
