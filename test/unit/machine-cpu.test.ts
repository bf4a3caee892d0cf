import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { describeFileCpu, readFileCpu } from "../../src/testenv/file-cpu-report.js";
import { describeCpu, parseCpuLine } from "../../src/testenv/machine-cpu.js";

describe("machine CPU over a test run", () => {
  it("reads /proc/stat's aggregate line: busy includes steal, idle includes iowait", () => {
    assert.deepEqual(parseCpuLine("cpu  100 5 50 1000 20 3 2 7 0 0"), { busy: 167, idle: 1020, iowait: 20 });
    assert.equal(parseCpuLine("cpu0 1 2"), undefined);
    assert.equal(parseCpuLine(""), undefined);
  });

  it("says the busy share of the interval and the CPU-seconds used", () => {
    const line = describeCpu(
      { busy: 1000, idle: 1000, iowait: 0 },
      { busy: 31_000, idle: 11_000, iowait: 2000 },
      2,
    );
    assert.match(line, /75% busy, 25% idle \(5% waiting on I\/O\) of 2 cores; 300 CPU-seconds used/);
  });
});

describe("CPU per test file", () => {
  it("totals the files' own CPU and lists the costliest first, skipping torn lines", () => {
    const dir = mkdtempSync(join(tmpdir(), "file-cpu-"));
    const path = join(dir, "r.jsonl");
    writeFileSync(
      path,
      [
        JSON.stringify({ file: "/r/dist/test/a.test.js", self: 1, children: 2, wall: 10 }),
        JSON.stringify({ file: "/r/dist/test/b.test.js", self: 5, children: 5.5, wall: 20 }),
        '{"file": "/r/dist/test/c.te',
      ].join("\n"),
    );
    const rows = readFileCpu(path);
    assert.equal(rows.length, 2);
    const lines = describeFileCpu(rows, "/r/dist/test", 1);
    assert.equal(lines[0], "test files' own processes used 14 CPU-seconds; the costliest:");
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /10\.5 s CPU \(5\.0 file \+ 5\.5 children\) in 20 s {2}b\.test\.js$/);
    rmSync(dir, { recursive: true });
  });
});
