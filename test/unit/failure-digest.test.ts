import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { describeFailures, FailureDigest } from "../../src/testenv/failure-digest.js";

// The TAP read here is what node's own runner prints for a file with nested suites, a failing
// assertion, a thrown error and passing tests: the digest is checked against the real format.
function realTap(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), "failure-digest-"));
  try {
    const file = join(dir, "sample.test.mjs");
    writeFileSync(file, source);
    const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
    try {
      return execFileSync(process.execPath, ["--test", "--test-reporter=tap", file], {
        env,
        encoding: "utf8",
      });
    } catch (err) {
      // A run with failures exits 1; its output is what we want.
      return (err as { stdout: string }).stdout;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const SAMPLE = `
import { describe, it } from "node:test";
import assert from "node:assert/strict";
describe("outer", () => {
  describe("inner", () => {
    it("fails here", () => { assert.equal(1, 2, "one is not two"); });
    it("passes", () => {});
  });
  it("throws", () => { throw new Error("boom\\nsecond line"); });
});
describe("all good", () => { it("x", () => {}); });
it("top level fail", () => { assert.deepEqual({ a: 1 }, { a: 2 }); });
`;

describe("failure digest of node's TAP output", () => {
  it("keeps each failing test with its suites, place and error, and not the suites failing only for them", () => {
    const digest = new FailureDigest();
    for (const line of realTap(SAMPLE).split("\n")) digest.feed(line);
    digest.close();
    assert.deepEqual(
      digest.failures.map((f) => f.name),
      ["outer › inner › fails here", "outer › throws", "top level fail"],
    );
    const [first, second, third] = digest.failures;
    assert.match(first!.location ?? "", /sample\.test\.mjs:6:5$/);
    assert.equal(first!.error[0], "one is not two");
    assert.ok(first!.error.some((l) => l.includes("1 !== 2")));
    // The error ends where the next key (code:, stack:) starts: no stack frames in the digest.
    assert.deepEqual(second!.error, ["boom", "second line"]);
    assert.ok(third!.error.some((l) => l.includes("a: 1")));
    assert.ok(!digest.failures.some((f) => f.error.some((l) => l.includes("TestContext"))));
  });

  it("finds nothing in a run that passed, and prints nothing for it", () => {
    const digest = new FailureDigest();
    for (const line of realTap(`import { it } from "node:test"; it("ok", () => {});`).split("\n"))
      digest.feed(line);
    digest.close();
    assert.deepEqual(digest.failures, []);
    assert.deepEqual(describeFailures(digest.failures), []);
  });

  it("prints each failure's path, place and error, and says how many more it left out", () => {
    const failures = Array.from({ length: 3 }, (_, i) => ({
      name: `t${i}`,
      location: `f.js:${i}:1`,
      error: ["why", ""],
    }));
    const lines = describeFailures(failures, 2);
    assert.equal(lines[0], "3 failed tests:");
    assert.deepEqual(lines.slice(1, 4), ["  ✖ t0", "      at f.js:0:1", "      why"]);
    assert.equal(lines.at(-1), '  … and 1 more (search the log for "not ok")');
    // Trailing blank lines of an error are not printed.
    assert.ok(!lines.includes("      "));
  });
});
