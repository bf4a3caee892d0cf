import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../src/apis/openbaocluster-names.js";
import { MAX_THROWAWAY_NAME, throwawayClusterName } from "../../src/targets/openbao/drill/names.js";
import {
  runOf,
  sealKeyCopy,
  throwawayCluster,
  throwawayRestore,
} from "../../src/targets/openbao/drill/objects.js";
import { failureReasonOf } from "../../src/targets/openbao/drill/observe.js";
import {
  due,
  intervalSeconds,
  judge,
  type Observed,
  PROBE_GRACE_MS,
  plan,
  type Run,
  recorded,
  recordOutcome,
} from "../../src/targets/openbao/drill/plan.js";
import { secretAllowLists } from "../../src/targets/openbao/tenant/secrets.js";

const NOW = new Date("2026-12-06T12:00:30Z");

function source(over: { restoreTest?: object; backup?: object; unseal?: object } = {}): OpenBaoCluster {
  return {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "prod", namespace: "sec", uid: "u-1", generation: 3 },
    spec: {
      version: "2.4.4",
      replicas: 3,
      storage: { size: "1Gi" },
      ...(over.unseal ? { unseal: over.unseal } : {}),
      backup: {
        schedule: "0 * * * *",
        target: { endpoint: "http://s3", bucket: "b", credentialsSecretRef: { name: "s3" } },
        tokenSecretRef: { name: "prod-root-token" },
        restoreTest: { canary: { path: "kv/data/canary" }, ...over.restoreTest },
      },
      gateway: { enabled: true },
    },
    status: { backup: { lastBackupKey: "clusters/sec/prod/b2.snap", ...over.backup } },
  } as unknown as OpenBaoCluster;
}

const run = (o: Partial<Run> = {}): Run => ({
  key: "clusters/sec/prod/b2.snap",
  window: "",
  startedAt: new Date(NOW.getTime() - 60_000),
  ...o,
});

const observed = (o: Partial<Observed> = {}): Observed => ({ source: source(), now: NOW, claims: 0, ...o });

describe("restore test: names", () => {
  it("the throwaway is <source>-restore-test, the same every time", () => {
    assert.equal(throwawayClusterName("prod"), "prod-restore-test");
    assert.equal(throwawayClusterName("prod"), throwawayClusterName("prod"));
  });
  it("a long source name is cut and kept unique with a hash, within the bound", () => {
    const a = throwawayClusterName("a".repeat(50));
    const b = throwawayClusterName(`${"a".repeat(49)}b`);
    assert.ok(a.length <= MAX_THROWAWAY_NAME, a);
    assert.ok(b.length <= MAX_THROWAWAY_NAME, b);
    assert.notEqual(a, b);
    assert.match(a, /^a+-[0-9a-f]{8}-restore-test$/);
  });
});

describe("restore test: when a run is due", () => {
  it("not before a backup exists", () => {
    const d = due(source({ backup: { lastBackupKey: undefined } }), {}, NOW);
    assert.equal(d.due, false);
  });
  it("without a schedule: once per new backup", () => {
    assert.deepEqual(due(source(), {}, NOW), {
      due: true,
      run: { key: "clusters/sec/prod/b2.snap", window: "" },
    });
    const tested = source({ backup: { lastVerificationBackupKey: "clusters/sec/prod/b2.snap" } });
    assert.equal(due(tested, {}, NOW).due, false);
  });
  it("with a schedule: once per window, the latest backup; the next window's time to come back", () => {
    const d = due(source(), { schedule: "0 * * * *" }, NOW);
    assert.deepEqual(d, {
      due: true,
      run: { key: "clusters/sec/prod/b2.snap", window: "2026-12-06T12:00:00Z" },
    });
    const done = source({ backup: { lastVerificationScheduledTime: "2026-12-06T12:00:00Z" } });
    const again = due(done, { schedule: "0 * * * *" }, NOW);
    assert.equal(again.due, false);
    assert.equal(again.due === false && again.requeueMs, 59 * 60_000 + 30_000);
  });
  it("a bad schedule is an error naming the field", () => {
    assert.throws(() => due(source(), { schedule: "every day" }, NOW), /spec\.backup\.restoreTest\.schedule/);
    const p = plan(observed({ source: source({ restoreTest: { schedule: "every day" } }) }));
    assert.equal(p.kind, "idle");
    assert.match(p.kind === "idle" ? (p.invalid?.message ?? "") : "", /spec\.backup\.restoreTest\.schedule/);
  });
  it("the interval: the test's schedule, else the backup's", () => {
    assert.equal(intervalSeconds({ schedule: "0 3 * * *" }, "0 * * * *", NOW), 86400);
    assert.equal(intervalSeconds({}, "0 * * * *", NOW), 3600);
    assert.equal(intervalSeconds({}, undefined, NOW), undefined);
  });
});

describe("restore test: a run step by step", () => {
  const t = (o: object = {}) => ({ run: run(), deleting: false, initialized: false, ...o });
  it("starts when due and nothing is left of an earlier run", () => {
    assert.deepEqual(plan(observed()), {
      kind: "start",
      run: { key: "clusters/sec/prod/b2.snap", window: "" },
    });
  });
  it("cleans leftovers before anything: a restore or volumes without a throwaway", () => {
    assert.equal(plan(observed({ claims: 1 })).kind, "cleanup");
    assert.equal(plan(observed({ restore: { phase: "Completed" } })).kind, "cleanup");
  });
  it("waits for the throwaway to initialize, then creates the restore, then waits for it", () => {
    assert.equal(plan(observed({ throwaway: t() })).kind, "wait");
    assert.equal(plan(observed({ throwaway: t({ initialized: true }) })).kind, "create-restore");
    const w = plan(observed({ throwaway: t({ initialized: true }), restore: { phase: "Running" } }));
    assert.equal(w.kind, "wait");
  });
  it("a failed restore fails the run with the restore's reason", () => {
    const p = plan(
      observed({
        throwaway: t({ initialized: true }),
        restore: { phase: "Failed", message: "SnapshotFailed: could not verify hash file" },
      }),
    );
    assert.equal(p.kind, "record");
    assert.ok(p.kind === "record" && !p.outcome.passed);
    assert.equal(p.outcome.reason, R.RestoreTestRestoreFailed);
    assert.match(
      p.outcome.message,
      /clusters\/sec\/prod\/b2\.snap: SnapshotFailed: could not verify hash file/,
    );
  });
  it("a restore OpenBao refused as sealed by another seal fails the run as RestoreTestSealMismatch", () => {
    const message =
      "SealMismatch: snapshot: HTTP 400: could not verify hash file: prod-restore-test is the restore test of prod";
    const p = plan(
      observed({
        throwaway: t({ initialized: true }),
        restore: { phase: "Failed", message, failureReason: failureReasonOf(message) },
      }),
    );
    assert.ok(p.kind === "record" && !p.outcome.passed);
    assert.equal(p.outcome.reason, R.RestoreTestSealMismatch);
    assert.match(
      p.outcome.message,
      /^restoring clusters\/sec\/prod\/b2\.snap: SealMismatch: .*could not verify hash file/,
    );
    // The restore's other failures keep the general reason.
    const other = "SnapshotFailed: hash check failed";
    const q = plan(
      observed({
        throwaway: t({ initialized: true }),
        restore: { phase: "Failed", message: other, failureReason: failureReasonOf(other) },
      }),
    );
    assert.ok(q.kind === "record" && !q.outcome.passed);
    assert.equal(q.outcome.reason, R.RestoreTestRestoreFailed);
  });
  it("the restore's reason is the word its RestoreComplete message starts with", () => {
    assert.equal(failureReasonOf("SealMismatch: snapshot: HTTP 400: x"), "SealMismatch");
    assert.equal(failureReasonOf("DownloadFailed: NoSuchKey: y"), "DownloadFailed");
    assert.equal(failureReasonOf("restore failed"), undefined);
  });
  it("a completed restore is probed, even past the timeout", () => {
    const old = run({ startedAt: new Date(NOW.getTime() - 3 * 3600_000) });
    const p = plan(
      observed({ throwaway: t({ initialized: true, run: old }), restore: { phase: "Completed" } }),
    );
    assert.equal(p.kind, "probe");
  });
  it("times out with the stage it reached", () => {
    const old = run({ startedAt: new Date(NOW.getTime() - 31 * 60_000) });
    const p = plan(observed({ throwaway: t({ run: old }) }));
    assert.ok(p.kind === "record" && !p.outcome.passed);
    assert.equal(p.outcome.reason, R.RestoreTestTimedOut);
    assert.match(p.outcome.message, /not initialized/);
    const short = source({ restoreTest: { timeout: "5m" } });
    const p2 = plan(
      observed({
        source: short,
        throwaway: t({ run: run({ startedAt: new Date(NOW.getTime() - 6 * 60_000) }) }),
      }),
    );
    assert.equal(p2.kind, "record");
  });
  it("a recorded run, a disabled test, a deleting throwaway or a run without annotations: cleanup", () => {
    const rec = source({
      backup: {
        lastVerificationBackupKey: "clusters/sec/prod/b2.snap",
        lastVerificationTime: "2026-12-06T12:00:00Z",
      },
    });
    assert.equal(recorded(rec, run()), true);
    assert.equal(plan(observed({ source: rec, throwaway: t({ initialized: true }) })).kind, "cleanup");
    const off = source({ restoreTest: { enabled: false } });
    assert.equal(plan(observed({ source: off, throwaway: t() })).kind, "cleanup");
    assert.equal(plan(observed({ throwaway: t({ deleting: true }) })).kind, "cleanup");
    assert.equal(plan(observed({ throwaway: t({ run: undefined }) })).kind, "cleanup");
  });
  it("a result recorded before this run started does not count as this run's", () => {
    const earlier = source({
      backup: {
        lastVerificationBackupKey: "clusters/sec/prod/b2.snap",
        lastVerificationTime: "2026-12-06T11:00:00Z",
      },
    });
    assert.equal(recorded(earlier, run()), false);
  });
});

describe("restore test: judging the restored pod", () => {
  const completed = new Date(NOW.getTime() - 10_000);
  it("unsealed with its canary: passed", () => {
    assert.deepEqual(judge(run(), { kind: "ok" }, NOW, completed), {
      kind: "record",
      outcome: { passed: true, key: "clusters/sec/prod/b2.snap", window: "" },
    });
  });
  it("sealed or canary missing: waited for within the grace, then failed with its reason", () => {
    assert.equal(judge(run(), { kind: "sealed", message: "sealed" }, NOW, completed).kind, "wait");
    const late = new Date(NOW.getTime() - PROBE_GRACE_MS - 1000);
    const s = judge(run(), { kind: "sealed", message: "sealed" }, NOW, late);
    assert.ok(s.kind === "record" && !s.outcome.passed && s.outcome.reason === R.RestoreTestSealed);
    const c = judge(
      run(),
      { kind: "canary-missing", message: "kv/data/canary answered HTTP 404" },
      NOW,
      late,
    );
    assert.ok(c.kind === "record" && !c.outcome.passed && c.outcome.reason === R.RestoreTestCanaryMissing);
  });
  it("the outcome on status.backup: a pass sets lastVerified*, a failure keeps them and says why", () => {
    const passed = recordOutcome({ lastBackupKey: "k" }, { passed: true, key: "k", window: "" }, NOW);
    assert.equal(passed.lastVerifiedTime, "2026-12-06T12:00:30Z");
    assert.equal(passed.lastVerifiedBackupKey, "k");
    const failed = recordOutcome(
      passed,
      {
        passed: false,
        key: "k2",
        window: "2026-12-06T13:00:00Z",
        reason: R.RestoreTestRestoreFailed,
        message: "bad",
      },
      new Date(NOW.getTime() + 3600_000),
    );
    assert.equal(failed.lastVerifiedBackupKey, "k");
    assert.equal(failed.lastVerificationBackupKey, "k2");
    assert.equal(failed.lastVerificationFailureReason, "RestoreTestRestoreFailed");
    assert.equal(failed.lastVerificationScheduledTime, "2026-12-06T13:00:00Z");
  });
});

describe("restore test: the throwaway's objects", () => {
  const r = run({ window: "2026-12-06T12:00:00Z" });
  const c = throwawayCluster(source(), r);
  it("one voter, same version and seal, nothing that reaches outside, volumes deleted with it", () => {
    assert.equal(c.metadata.name, "prod-restore-test");
    assert.equal(c.spec.replicas, 1);
    assert.equal(c.spec.version, "2.4.4");
    assert.equal(c.spec.deletionPolicy, "DeleteAll");
    assert.equal(c.spec.backup, undefined);
    assert.equal((c.spec as Record<string, unknown>)["gateway"], undefined);
    assert.equal(c.metadata.labels?.["openbao.org/restore-test-of"], "prod");
    assert.equal(c.metadata.ownerReferences?.[0]?.uid, "u-1");
    assert.equal(c.metadata.ownerReferences?.[0]?.controller, undefined);
  });
  it("its annotations give the run back after a restart", () => {
    assert.deepEqual(runOf(c), r);
    assert.equal(runOf({ metadata: { name: "x" } }), undefined);
  });
  it("the static seal key is copied under the throwaway's Secret name", () => {
    const s = sealKeyCopy(source(), "a2V5") as { metadata: { name: string }; data: Record<string, string> };
    assert.equal(s.metadata.name, "prod-restore-test-unseal-key");
    assert.deepEqual(s.data, { key: "a2V5" });
  });
  it("the restore: the run's key from the source's target into the throwaway, with its own root token", () => {
    const t = { ...c, metadata: { ...c.metadata, uid: "u-2" } };
    const rs = throwawayRestore(source(), t, r);
    assert.equal(rs.spec.cluster, "prod-restore-test");
    assert.equal(rs.spec.source.key, r.key);
    assert.equal(rs.spec.source.target.bucket, "b");
    assert.deepEqual(rs.spec.tokenSecretRef, { name: "prod-restore-test-root-token" });
    assert.equal(rs.metadata.ownerReferences?.[0]?.uid, "u-2");
  });
});

describe("restore test: a tenant's Secret allow-lists", () => {
  it("the seal key copy is written before the throwaway exists; the canary's token is read", () => {
    const c = source({ restoreTest: { canary: { path: "kv/data/c", tokenSecretRef: { name: "reader" } } } });
    const lists = secretAllowLists([c]);
    assert.ok(lists.write.includes("prod-restore-test-unseal-key"), JSON.stringify(lists));
    assert.ok(lists.read.includes("reader"), JSON.stringify(lists));
    const off = secretAllowLists([source({ restoreTest: { enabled: false } })]);
    assert.ok(!off.write.includes("prod-restore-test-unseal-key"), JSON.stringify(off));
  });
});
