import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const PROCESSES = fileURLToPath(new URL("../../src/testenv/processes.js", import.meta.url));

describe("a test service's stop", () => {
  it("keeps its caller's process alive until a child that ignored SIGTERM is gone after SIGKILL", () => {
    const dir = mkdtempSync(join(tmpdir(), "service-stop-"));
    try {
      // A process whose only work is stopping one service: nothing else keeps its event loop alive,
      // as in the test runner's teardown. It must get past the await, not end inside it.
      const script = `
        const { readFileSync } = await import("node:fs");
        const { startService } = await import(${JSON.stringify(PROCESSES)});
        const log = ${JSON.stringify(join(dir, "stubborn.log"))};
        const s = await startService({
          name: "stubborn",
          command: "sh",
          args: ["-c", "trap '' TERM; echo up; while :; do sleep 1; done"],
          logPath: log,
        });
        // Its trap is set once it said so; a SIGTERM before that would simply end it.
        while (!readFileSync(log, "utf8").includes("up")) await new Promise((r) => setTimeout(r, 20));
        await s.stop(200);
        console.log("stopped " + (s.isRunning() ? "running" : "gone"));
      `;
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
        encoding: "utf8",
        timeout: 30_000,
      });
      assert.equal(out.trim(), "stopped gone");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
