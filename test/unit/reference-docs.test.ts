import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { allKinds } from "../../src/apis/index.js";
import { referenceFor, renderReferenceFiles } from "../../src/apis/reference.js";

const dir = fileURLToPath(new URL("../../../docs/reference", import.meta.url));
const REGENERATE = "regenerate with `npm run build && npm run crds:write`";

describe("docs/reference: field references generated from the CRDs", () => {
  it("holds exactly what the schemas generate", () => {
    const expected = renderReferenceFiles();
    assert.deepEqual(
      readdirSync(dir).sort(),
      expected.map((f) => f.fileName),
      REGENERATE,
    );
    for (const f of expected) {
      assert.ok(
        readFileSync(join(dir, f.fileName), "utf8") === f.content,
        `${f.fileName} drifted; ${REGENERATE}`,
      );
    }
  });

  it("lists every field of every kind with its rules", () => {
    const vault = referenceFor(allKinds.find((k) => k.kind === "VaultSeed")!.crd);
    assert.match(vault, /\| `spec\.path` \| string \| required; length ≥ 3; length ≤ 512; pattern/);
    assert.match(
      vault,
      /\| `spec\.deletionPolicy` \| string \| one of `Retain`, `Delete`; default `"Retain"` \|/,
    );
    assert.match(vault, /\| `status\.conditions\[\]\.type` \|/);
    // Templates in descriptions are escaped, not read as HTML tags.
    assert.match(vault, /&lt;random:32&gt;/);
    for (const k of allKinds) {
      const text = referenceFor(k.crd);
      const lines = text.split("\n").filter((l) => l.startsWith("| `"));
      for (const l of lines) assert.equal(l.split(/(?<!\\)\|/).length, 6, `one row, four cells: ${l}`);
      assert.ok(lines.length > 5, `${k.kind} has fields`);
    }
  });
});
