import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { RUNTIME_V8_FLAGS } from "../../src/cli/v8-flags.js";
import { ensureOperatorNode } from "../../src/testenv/lts-node.js";

const V8_FLAGS_MODULE = fileURLToPath(new URL("../../src/cli/v8-flags.js", import.meta.url));

// A hot function whose callee Maglev inlines, run on the image's Node with Maglev's inlining traced
// (TurboFan off, so only Maglev compiles it). `apply` sets the run command's flags first.
const PROGRAM = `
const apply = process.argv[1] === "apply";
const start = async () => {
  if (apply) (await import(${JSON.stringify(V8_FLAGS_MODULE)})).applyRuntimeV8Flags();
  const add = (a, b) => a + b;
  const hot = (n) => { let s = 0; for (let i = 0; i < n; i++) s = add(s, i); return s; };
  for (let k = 0; k < 5000; k++) hot(100);
};
start();
`;

describe("the run command's V8 flags", () => {
  it("turn Maglev's inlining off when set from inside the process", async () => {
    assert.deepEqual(RUNTIME_V8_FLAGS, ["--no-maglev-inlining"]);
    const node = await ensureOperatorNode(() => {});
    const traced = (mode: string) =>
      execFileSync(
        node,
        ["--trace-maglev-inlining", "--no-turbofan", "--input-type=module", "-e", PROGRAM, mode],
        {
          encoding: "utf8",
        },
      )
        .split("\n")
        .filter((l) => /inlin/i.test(l)).length;
    // Without the flags Maglev inlines the callee (so the trace can show it), with them it does not.
    assert.ok(traced("plain") > 0, "Maglev inlined nothing without the flags: the check cannot tell");
    assert.equal(traced("apply"), 0);
  });
});
