import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { checkPrerequisites } from "../../src/targets/openbao/adminops/backup/prerequisites.js";
import {
  formatDuration,
  jobOutcome,
  recordOutcome,
} from "../../src/targets/openbao/adminops/backup/result.js";

const job = (conditions: { type: string; status: string; reason?: string }[]): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "bao-backup-x", namespace: "ns" },
  status: { conditions },
});
const pod = (message: string | undefined): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "ns", creationTimestamp: "2026-12-01T00:00:00Z" },
  status: { containerStatuses: [{ name: "executor", state: { terminated: { exitCode: 0, message } } }] },
});

describe("backup Job result", () => {
  it("a running Job has no result yet", () => {
    assert.deepEqual(jobOutcome(job([]), []), { state: "running" });
  });

  it("reads key, size and duration from the executor's termination message", () => {
    const line = JSON.stringify({
      ok: true,
      operation: "backup",
      key: "a/b.snap",
      size: 1234,
      durationMs: 5600,
    });
    assert.deepEqual(jobOutcome(job([{ type: "Complete", status: "True" }]), [pod(line)]), {
      state: "succeeded",
      key: "a/b.snap",
      size: 1234,
      durationMs: 5600,
    });
  });

  it("a failed Job without a result line (pod killed) is Interrupted; the executor's reason wins when present", () => {
    const killed = jobOutcome(job([{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }]), [
      pod(undefined),
    ]);
    assert.equal(killed.state, "failed");
    assert.equal(killed.state === "failed" && killed.reason, "Interrupted");
    const line = JSON.stringify({
      ok: false,
      operation: "backup",
      key: "a/b.snap",
      error: "upload aborted",
      reason: "UploadFailed",
    });
    const failed = jobOutcome(job([{ type: "Failed", status: "True" }]), [pod(line)]);
    assert.deepEqual(failed, { state: "failed", reason: "UploadFailed", message: "upload aborted" });
  });

  it("records a success, then a failure that keeps the last success", () => {
    const now = new Date("2026-12-01T03:01:00.123Z");
    const ok = recordOutcome(
      { jobName: "j", consecutiveFailures: 2, lastFailureReason: "X" },
      { state: "succeeded", key: "p/ns/bao/20261201T030000Z-ab.snap", size: 10, durationMs: 61_500 },
      undefined,
      undefined,
      now,
    );
    assert.equal(ok.jobName, undefined);
    assert.equal(ok.lastBackupTime, "2026-12-01T03:01:00Z");
    assert.equal(ok.lastBackupName, "20261201T030000Z-ab.snap");
    assert.equal(ok.lastBackupSize, 10);
    assert.equal(ok.lastBackupDuration, "1m1.5s");
    assert.equal(ok.consecutiveFailures, 0);
    assert.equal(ok.lastFailureReason, undefined);
    const bad = recordOutcome(
      { ...ok, jobName: "k" },
      { state: "failed", reason: "Interrupted", message: "pod killed" },
      undefined,
      undefined,
      new Date("2026-12-02T03:01:00Z"),
    );
    assert.equal(bad.lastBackupTime, ok.lastBackupTime);
    assert.equal(bad.lastBackupName, ok.lastBackupName);
    assert.equal(bad.consecutiveFailures, 1);
    assert.equal(bad.lastFailureReason, "Interrupted");
    assert.equal(bad.jobName, undefined);
  });

  it("formats durations as Go does", () => {
    assert.equal(formatDuration(0), "0s");
    assert.equal(formatDuration(1500), "1.5s");
    assert.equal(formatDuration(3_723_000), "1h2m3s");
  });
});

describe("backup prerequisites", () => {
  const cluster = (backup: Record<string, unknown> | undefined, initialized = true): OpenBaoCluster =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "bao", namespace: "ns" },
      spec: { version: "2.4.1", storage: { size: "1Gi" }, tls: { enabled: true }, backup },
      status: { initialized },
    }) as unknown as OpenBaoCluster;
  const target = { bucket: "b", credentialsSecretRef: { name: "creds" } };
  const all = new Set(["creds", "tok", "bao-tls-server"]);
  const base = { secretsPresent: all, caSecret: "bao-tls-server", holder: "backup/bao/j" };

  it("passes when everything is there", () => {
    assert.deepEqual(
      checkPrerequisites({
        ...base,
        cluster: cluster({ schedule: "@daily", target, jwtAuthRole: "backup" }),
      }),
      { ok: true },
    );
  });

  it("names each missing piece with its own reason", () => {
    const cases: [OpenBaoCluster, Set<string>, string, RegExp][] = [
      [
        cluster({ schedule: "@daily", target, jwtAuthRole: "r" }, false),
        all,
        "ClusterNotReady",
        /initialized/,
      ],
      [cluster({ schedule: "@daily", target }), all, "AuthenticationRequired", /jwtAuthRole.*tokenSecretRef/],
      [
        cluster({ schedule: "@daily", target, tokenSecretRef: { name: "nope" } }),
        all,
        "NoBackupToken",
        /Secret nope/,
      ],
      [
        cluster({ schedule: "@daily", target, jwtAuthRole: "r" }),
        new Set(["bao-tls-server"]),
        "PrerequisitesMissing",
        /Secret creds .*credentialsSecretRef/,
      ],
    ];
    for (const [c, present, reason, msg] of cases) {
      const r = checkPrerequisites({ ...base, cluster: c, secretsPresent: present });
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.reason, reason);
      assert.match(!r.ok ? r.message : "", msg);
    }
  });

  it("the Hardened profile refuses a backup without egress rules, whose Job could reach no object store", () => {
    const hardened = (network: Record<string, unknown>) => {
      const c = cluster({ schedule: "@daily", target, jwtAuthRole: "r" });
      return { ...c, spec: { ...c.spec, profile: "Hardened", network } } as OpenBaoCluster;
    };
    const r = checkPrerequisites({ ...base, cluster: hardened({}) });
    assert.equal(!r.ok && r.reason, "NetworkEgressRulesRequired");
    assert.match(!r.ok ? r.message : "", /spec\.network\.egressRules/);
    const rule = { to: [{ ipBlock: { cidr: "192.0.2.0/24" } }] };
    assert.deepEqual(checkPrerequisites({ ...base, cluster: hardened({ egressRules: [rule] }) }), {
      ok: true,
    });
  });

  it("waits for a lock held by another operation, not for its own", () => {
    const c = cluster({ schedule: "@daily", target, jwtAuthRole: "r" });
    const held = checkPrerequisites({
      ...base,
      cluster: c,
      lock: { operation: "Restore", holder: "restore/ns/r1" },
    });
    assert.equal(!held.ok && held.reason, "OperationLockHeld");
    assert.match(!held.ok ? held.message : "", /Restore \(restore\/ns\/r1\)/);
    assert.deepEqual(
      checkPrerequisites({ ...base, cluster: c, lock: { operation: "Backup", holder: "backup/bao/j" } }),
      { ok: true },
    );
  });
});
