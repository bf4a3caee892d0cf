import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { exists, populateAtomically } from "../../src/testenv/atomic.js";

describe("cache entries are built once, even by runs at the same time", () => {
  it("a second run waits for the first and finds its entry instead of building again", {
    timeout: 60_000,
  }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "atomic-")), "entry");
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let sawLock!: () => void;
    const waited = new Promise<void>((r) => {
      sawLock = r;
    });
    let building!: () => void;
    const firstHoldsLock = new Promise<void>((r) => {
      building = r;
    });
    const first = populateAtomically(dir, async (scratch) => {
      builds++;
      building();
      await gate;
      writeFileSync(join(scratch, "built"), "first");
    });
    // The second starts once the first is building (so holds the lock): started together, either
    // could win the lock, and the one that lost would be the one the test waits on.
    await firstHoldsLock;
    const second = populateAtomically(
      dir,
      async (scratch) => {
        builds++;
        writeFileSync(join(scratch, "built"), "second");
      },
      { pollMs: 10, onWait: () => sawLock() },
    );
    // The first holds the gate until the second has met its lock: no clock decides this, only the
    // second run's own report that it is waiting (a hang here is the failure, seen by the timeout).
    await waited;
    assert.equal(builds, 1, "only the first run builds while it holds the lock");
    release();
    await Promise.all([first, second]);
    assert.equal(builds, 1);
    assert.equal(readFileSync(join(dir, "built"), "utf8"), "first");
    assert.equal(await exists(`${dir}.lock`), false, "the lock is gone");
  });

  it("a lock left by a process that is gone is taken over", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "atomic-")), "entry");
    const gone = spawnSync(process.execPath, ["-e", "process.pid"]).pid!;
    mkdirSync(`${dir}.lock`);
    writeFileSync(`${dir}.lock/pid`, String(gone));
    await populateAtomically(dir, async (scratch) => writeFileSync(join(scratch, "built"), "x"), {
      pollMs: 10,
    });
    assert.equal(readFileSync(join(dir, "built"), "utf8"), "x");
  });

  it("a failed build leaves neither the entry nor the lock, so the next run builds", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "atomic-")), "entry");
    await assert.rejects(
      populateAtomically(dir, async () => {
        throw new Error("compiler crashed");
      }),
      /compiler crashed/,
    );
    assert.equal(await exists(dir), false);
    assert.equal(await exists(`${dir}.lock`), false);
    await populateAtomically(dir, async (scratch) => writeFileSync(join(scratch, "built"), "y"));
    assert.equal(readFileSync(join(dir, "built"), "utf8"), "y");
  });
});
