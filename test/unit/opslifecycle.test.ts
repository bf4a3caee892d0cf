import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoClusterStatus, OperationLock } from "../../src/apis/openbaocluster.js";
import {
  adminOpsPlaneOf,
  applyConcern,
  backupHolder,
  contention,
  decideAcquire,
  decideRelease,
  decideTakeover,
  type LockIdentity,
  restoreHolder,
  workloadPlaneOf,
} from "../../src/targets/openbao/opslifecycle/index.js";

const t0 = new Date("2026-03-01T10:00:00Z");
const later = (ms: number) => new Date(t0.getTime() + ms);
const backup: LockIdentity = { operation: "Backup", holder: backupHolder("demo", "w-1") };
const restore: LockIdentity = { operation: "Restore", holder: restoreHolder("ns", "r1") };

describe("operation lock decisions", () => {
  it("a free lock is taken with both timestamps; an empty object left by hand counts as free", () => {
    for (const current of [undefined, {} as OperationLock]) {
      const d = decideAcquire(current, backup, { now: t0, message: "window w-1" });
      assert.deepEqual(d, {
        kind: "acquire",
        lock: {
          operation: "Backup",
          holder: "backup/demo/w-1",
          acquiredAt: "2026-03-01T10:00:00Z",
          renewedAt: "2026-03-01T10:00:00Z",
          message: "window w-1",
        },
      });
    }
  });

  it("an exact match renews, but not more often than renewAfterMs; acquiredAt never moves", () => {
    const held = (decideAcquire(undefined, backup, { now: t0 }) as { lock: OperationLock }).lock;
    assert.deepEqual(decideAcquire(held, backup, { now: later(10_000), renewAfterMs: 30_000 }), {
      kind: "held",
    });
    const d = decideAcquire(held, backup, { now: later(31_000), renewAfterMs: 30_000 });
    assert.equal(d.kind, "renew");
    assert.equal((d as { lock: OperationLock }).lock.acquiredAt, "2026-03-01T10:00:00Z");
    assert.equal((d as { lock: OperationLock }).lock.renewedAt, "2026-03-01T10:00:31Z");
  });

  it("another holder, or the same holder string under another operation, is contention", () => {
    const held = (decideAcquire(undefined, backup, { now: t0 }) as { lock: OperationLock }).lock;
    assert.deepEqual(decideAcquire(held, restore, { now: t0 }), { kind: "contended", heldBy: held });
    const sameNameOtherOp: LockIdentity = { operation: "Upgrade", holder: backup.holder };
    assert.equal(decideAcquire(held, sameNameOtherOp, { now: t0 }).kind, "contended");
  });

  it("release succeeds only for the exact holder; a free lock releases as a no-op", () => {
    const held = (decideAcquire(undefined, backup, { now: t0 }) as { lock: OperationLock }).lock;
    assert.deepEqual(decideRelease(held, backup), { kind: "release" });
    assert.deepEqual(decideRelease(held, restore), { kind: "not-holder", heldBy: held });
    assert.deepEqual(decideRelease(held, { operation: "Restore", holder: backup.holder }), {
      kind: "not-holder",
      heldBy: held,
    });
    assert.deepEqual(decideRelease(undefined, backup), { kind: "free" });
  });

  it("takeover names the previous holder and why; repeated by the new holder it changes nothing", () => {
    const held = (decideAcquire(undefined, backup, { now: t0 }) as { lock: OperationLock }).lock;
    const d = decideTakeover(held, restore, { kind: "restore-override", restore: "ns/r1" }, later(1000));
    assert.equal(d.kind, "take");
    const took = d as { lock: OperationLock; previous?: OperationLock };
    assert.deepEqual(took.previous, held);
    assert.equal(took.lock.holder, "restore/ns/r1");
    assert.equal(took.lock.operation, "Restore");
    assert.match(took.lock.message ?? "", /overrideOperationLock from Backup backup\/demo\/w-1/);
    assert.deepEqual(
      decideTakeover(took.lock, restore, { kind: "restore-override", restore: "ns/r1" }, later(2000)),
      { kind: "held" },
    );
  });

  it("rejects an empty or over-long holder with an error naming the problem", () => {
    assert.throws(
      () => decideAcquire(undefined, { operation: "Backup", holder: "" }, { now: t0 }),
      /holder is empty/,
    );
    assert.throws(
      () => decideRelease(undefined, { operation: "Backup", holder: "x".repeat(254) }),
      /254 characters, at most 253/,
    );
  });

  it("contention text names holder and operation, and tells a restore how to override", () => {
    const held = (decideAcquire(undefined, backup, { now: t0 }) as { lock: OperationLock }).lock;
    const c = contention(held, restore);
    assert.equal(c.reason, "OperationLockHeld");
    assert.match(c.message, /held by Backup \(holder backup\/demo\/w-1\) since 2026-03-01T10:00:00Z/);
    assert.match(c.message, /overrideOperationLock: true and force: true/);
    assert.ok(c.requeueAfterMs > 0);
    assert.doesNotMatch(
      contention(held, { operation: "Upgrade", holder: "upgrade/demo/1" }).message,
      /override/,
    );
  });
});

describe("status planes", () => {
  const cond = (type: string) => ({
    type,
    status: "True" as const,
    reason: "R",
    message: "m",
    lastTransitionTime: "2026-03-01T10:00:00Z",
  });
  const full: OpenBaoClusterStatus = {
    phase: "Running",
    readyReplicas: 3,
    backup: { consecutiveFailures: 1 },
    lastBackupTime: "2026-03-01T09:00:00Z",
    upgrade: { targetVersion: "2.8.0" },
    operationLock: { operation: "Backup", holder: "backup/demo/w-1" },
    conditions: [cond("Available"), cond("BackingUp"), cond("Upgrading"), cond("TLSReady")],
  };

  it("split the status into disjoint planes that together cover it", () => {
    const admin = adminOpsPlaneOf(full);
    const work = workloadPlaneOf(full);
    assert.deepEqual(Object.keys(admin).sort(), ["backup", "conditions", "lastBackupTime", "upgrade"]);
    assert.deepEqual(
      admin.conditions?.map((c) => c.type),
      ["BackingUp", "Upgrading"],
    );
    assert.deepEqual(Object.keys(work).sort(), ["conditions", "phase", "readyReplicas"]);
    assert.deepEqual(
      work.conditions?.map((c) => c.type),
      ["Available", "TLSReady"],
    );
  });

  it("changing one concern leaves its siblings; backup mirrors lastBackupTime to the top level", () => {
    const admin = adminOpsPlaneOf(full);
    const next = applyConcern(admin, "backup", {
      lastBackupTime: "2026-03-01T11:00:00Z",
      consecutiveFailures: 0,
    });
    assert.deepEqual(next.upgrade, { targetVersion: "2.8.0" });
    assert.equal(next.lastBackupTime, "2026-03-01T11:00:00Z");
    assert.deepEqual(next.conditions, admin.conditions);
    const cleared = applyConcern(admin, "upgrade", undefined);
    assert.equal("upgrade" in cleared, false);
    assert.deepEqual(cleared.backup, admin.backup);
  });

  it("refuses to write another plane's condition type through the AdminOps plane", () => {
    assert.throws(
      () => applyConcern(adminOpsPlaneOf(full), "conditions", [cond("BackingUp"), cond("Available")]),
      /Available are not AdminOps conditions/,
    );
  });
});
