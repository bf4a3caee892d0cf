import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  backupJobName,
  backupKeyPrefix,
  decide,
  latestWindow,
  parseSchedule,
  ScheduleError,
} from "../../src/targets/openbao/adminops/backup/schedule.js";

const at = (s: string) => new Date(s);

describe("backup schedule windows", () => {
  it("parses five-field expressions and shorthands, in UTC", () => {
    const c = parseSchedule("0 3 * * *");
    assert.equal(c.nextRun(at("2026-12-01T13:31:00Z"))?.toISOString(), "2026-12-02T03:00:00.000Z");
    assert.equal(
      parseSchedule("@hourly").nextRun(at("2026-12-01T13:31:00Z"))?.toISOString(),
      "2026-12-01T14:00:00.000Z",
    );
  });

  it("refuses a bad expression with an error naming the field", () => {
    for (const bad of ["", "bad", "61 * * * *", "0 0 * * * *"]) {
      assert.throws(
        () => parseSchedule(bad),
        (e: unknown) => e instanceof ScheduleError && e.message.startsWith("spec.backup.schedule:"),
        bad,
      );
    }
  });

  it("a window that falls exactly on now is due; one a second later is not", () => {
    const c = parseSchedule("*/5 * * * *");
    assert.equal(latestWindow(c, at("2026-12-01T13:30:00.000Z"))?.toISOString(), "2026-12-01T13:30:00.000Z");
    assert.equal(latestWindow(c, at("2026-12-01T13:29:59.999Z"))?.toISOString(), "2026-12-01T13:25:00.000Z");
  });

  it("runs each window once: the persisted window stops a second launch", () => {
    const base = { schedule: "0 * * * *", createdAt: "2026-12-01T10:10:00Z" };
    const first = decide({ ...base, now: at("2026-12-01T11:00:05Z") });
    assert.deepEqual(first.due, { kind: "scheduled", window: at("2026-12-01T11:00:00Z") });
    assert.equal(first.next?.toISOString(), "2026-12-01T12:00:00.000Z");
    // The same pass again (operator restarted) after the attempt was persisted: nothing due.
    const again = decide({
      ...base,
      now: at("2026-12-01T11:20:00Z"),
      lastAttemptScheduledTime: "2026-12-01T11:00:00Z",
    });
    assert.equal(again.due, undefined);
    // The next window is.
    const later = decide({
      ...base,
      now: at("2026-12-01T12:00:01Z"),
      lastAttemptScheduledTime: "2026-12-01T11:00:00Z",
    });
    assert.deepEqual(later.due, { kind: "scheduled", window: at("2026-12-01T12:00:00Z") });
  });

  it("windows before the cluster existed are not missed windows", () => {
    const d = decide({
      schedule: "0 * * * *",
      createdAt: "2026-12-01T10:10:00Z",
      now: at("2026-12-01T10:30:00Z"),
    });
    assert.equal(d.due, undefined);
    assert.equal(d.next?.toISOString(), "2026-12-01T11:00:00.000Z");
  });

  it("after an outage only the newest missed window runs, once", () => {
    const d = decide({
      schedule: "0 * * * *",
      now: at("2026-12-01T17:42:00Z"),
      lastAttemptScheduledTime: "2026-12-01T11:00:00Z",
    });
    assert.deepEqual(d.due, { kind: "scheduled", window: at("2026-12-01T17:00:00Z") });
  });

  it("a new trigger value asks for one backup; the same value again asks for nothing", () => {
    const base = {
      schedule: "0 3 * * *",
      now: at("2026-12-01T13:31:07.450Z"),
      createdAt: "2026-12-01T00:00:00Z",
    };
    const d = decide({
      ...base,
      trigger: "2026-12-01T13:31:00Z",
      lastAttemptScheduledTime: "2026-12-01T03:00:00Z",
    });
    assert.deepEqual(d.due, {
      kind: "manual",
      window: at("2026-12-01T13:31:07Z"),
      trigger: "2026-12-01T13:31:00Z",
    });
    const handled = decide({
      ...base,
      trigger: "2026-12-01T13:31:00Z",
      lastHandledTrigger: "2026-12-01T13:31:00Z",
      lastAttemptScheduledTime: "2026-12-01T13:31:07Z",
    });
    assert.equal(handled.due, undefined);
  });

  it("a manual backup also serves the window already due before it", () => {
    // 03:00 was due (lock busy) when a manual backup ran at 03:10: it is not run again afterwards.
    const d = decide({
      schedule: "0 3 * * *",
      now: at("2026-12-01T03:15:00Z"),
      lastAttemptScheduledTime: "2026-12-01T03:10:00Z",
      trigger: "x",
      lastHandledTrigger: "x",
    });
    assert.equal(d.due, undefined);
  });

  it("Job names are deterministic, valid and at most 63 characters", () => {
    const w = { kind: "scheduled" as const, window: at("2026-12-01T03:00:00Z") };
    // Upstream's name: backup-<cluster>-<UTC yyyymmdd-hhmmss>.
    assert.equal(backupJobName("bao", w), "backup-bao-20261201-030000");
    assert.equal(backupJobName("bao", w), backupJobName("bao", { ...w }));
    const m1 = backupJobName("bao", { kind: "manual", window: at("2026-12-01T03:00:00Z"), trigger: "now" });
    const m2 = backupJobName("bao", { kind: "manual", window: at("2026-12-01T04:00:00Z"), trigger: "now" });
    assert.equal(m1, m2, "the name of a manual backup depends on the trigger value only");
    assert.match(m1, /^backup-bao-manual-[0-9a-f]{8}$/);
    const long = "a".repeat(60);
    const n1 = backupJobName(long, w);
    const n2 = backupJobName(`${"a".repeat(59)}b`, w);
    assert.ok(n1.length <= 63, n1);
    assert.notEqual(n1, n2);
    assert.match(n1, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  it("the retention prefix is the folder every key of the cluster lands in", () => {
    assert.equal(backupKeyPrefix("/backups/", "ns", "bao"), "backups/ns/bao/");
    assert.equal(backupKeyPrefix(undefined, "ns", "bao"), "ns/bao/");
  });
});
