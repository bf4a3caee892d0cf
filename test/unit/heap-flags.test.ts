import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { containerMemoryLimit, heapFlagsFor } from "../../src/cli/heap.js";

const MiB = 1024 * 1024;
const root = mkdtempSync(join(tmpdir(), "cgroup-"));
after(() => rmSync(root, { recursive: true, force: true }));

function cgroup(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, "fs-"));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), content);
  }
  return dir;
}

describe("V8 heap flags for a container memory limit", () => {
  it("reads cgroup v2 memory.max, then cgroup v1, and treats 'max' and v1's sentinel as no limit", () => {
    assert.equal(containerMemoryLimit(cgroup({ "memory.max": "268435456\n" })), 256 * MiB);
    assert.equal(containerMemoryLimit(cgroup({ "memory.max": "max\n" })), undefined);
    assert.equal(containerMemoryLimit(cgroup({ "memory/memory.limit_in_bytes": "134217728\n" })), 128 * MiB);
    assert.equal(
      containerMemoryLimit(cgroup({ "memory/memory.limit_in_bytes": "9223372036854771712\n" })),
      undefined,
    );
    assert.equal(containerMemoryLimit(cgroup({})), undefined);
  });

  it("leaves room outside the heap and shrinks the young generation with the limit", () => {
    assert.deepEqual(heapFlagsFor(256 * MiB), ["--max-old-space-size=144", "--max-semi-space-size=1"]);
    assert.deepEqual(heapFlagsFor(128 * MiB), ["--max-old-space-size=48", "--max-semi-space-size=1"]);
    assert.deepEqual(heapFlagsFor(600 * MiB), ["--max-old-space-size=402", "--max-semi-space-size=2"]);
    assert.deepEqual(heapFlagsFor(2048 * MiB), ["--max-old-space-size=1488", "--max-semi-space-size=8"]);
    assert.deepEqual(heapFlagsFor(8192 * MiB), ["--max-old-space-size=6096", "--max-semi-space-size=16"]);
    // Below what the operator needs at all, the floor holds instead of a useless or negative size.
    assert.deepEqual(heapFlagsFor(64 * MiB), ["--max-old-space-size=32", "--max-semi-space-size=1"]);
  });

  it("the flags are accepted by node", async () => {
    const { execFileSync } = await import("node:child_process");
    const out = execFileSync(process.execPath, [
      ...heapFlagsFor(256 * MiB),
      "-e",
      "process.stdout.write(String(require('v8').getHeapStatistics().heap_size_limit))",
    ]);
    // The old-space cap bounds the whole heap limit (plus the young generation).
    assert.ok(Number(out) < 200 * MiB, `heap limit ${Number(out) / MiB} MiB`);
  });
});
