import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

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

describe("reasons come from one named set per kind", () => {
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
