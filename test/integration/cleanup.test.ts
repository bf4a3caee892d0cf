import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { eventually } from "../support/kube.js";

// The test runner itself (what `npm test` runs), in a private TMPDIR so that what it leaves behind
// is told apart from other runs on the machine.
const RUNNER = fileURLToPath(new URL("../run.js", import.meta.url));
const SMALL_TEST = fileURLToPath(new URL("../unit/conditions.test.js", import.meta.url));

function startRunner(tmp: string) {
  const child = spawn(process.execPath, [RUNNER, SMALL_TEST], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, TMPDIR: tmp },
  });
  let err = "";
  child.stderr.on("data", (c) => {
    err += String(c);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })),
  );
  return { child, exited, stderr: () => err };
}

const leftIn = (dir: string) => readdirSync(dir).filter((e) => e !== ".owner-pid");

describe("the test runner leaves no temp folders behind", () => {
  it("when the reader of its output is gone from the start (EPIPE on every write)", async () => {
    const tmp = makeTempDir("runner-epipe");
    const { child, exited, stderr } = startRunner(tmp);
    child.stdout.destroy();
    const { code } = await exited;
    assert.equal(code, 0, `the run must finish, not crash on EPIPE:\n${stderr()}`);
    assert.deepEqual(leftIn(tmp), []);
  });

  it("when Ctrl-C arrives while the pipe is gone", async () => {
    const tmp = makeTempDir("runner-sigint");
    const { child, exited, stderr } = startRunner(tmp);
    // Once the runner has made its first folder (a unit file alone: its timings scratch), the reader
    // goes and Ctrl-C follows.
    await eventually(
      () => (leftIn(tmp).length > 0 ? true : undefined),
      60_000,
      "the runner's first temp folder",
    );
    child.stdout.destroy();
    child.kill("SIGINT");
    const { code, signal } = await exited;
    assert.ok(code !== null || signal !== null, stderr());
    assert.deepEqual(leftIn(tmp), [], `left behind after Ctrl-C:\n${stderr()}`);
  });
});
