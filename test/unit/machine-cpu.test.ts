import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
