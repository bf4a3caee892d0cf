import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { plannedBackup } from "../../src/targets/openbao/adminops/backup/observe.js";

// What observe-only reports for backups, which it never runs: the Job a real run would start now.

const NOW = new Date("2026-12-01T03:00:30Z");

function cluster(over: {
  trigger?: string;
  initialized?: boolean;
  paused?: boolean;
  schedule?: string;
  backup?: Record<string, string>;
}): OpenBaoCluster {
  return {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: {
      name: "bao",
      namespace: "ns",
      creationTimestamp: "2026-11-01T00:00:00Z",
      ...(over.trigger ? { annotations: { "openbao.org/trigger-backup": over.trigger } } : {}),
    },
    spec: {
      version: "2.7.2",
      ...(over.paused ? { paused: true } : {}),
      backup: {
        schedule: over.schedule ?? "0 3 * * *",
        tokenSecretRef: { name: "t" },
        target: { bucket: "b" },
      },
    },
    status: { initialized: over.initialized ?? true, backup: over.backup ?? {} },
  } as unknown as OpenBaoCluster;
}

describe("observe-only: the backup a real run would start", () => {
  it("names the window's Job when a window is due", () => {
    assert.deepEqual(plannedBackup(cluster({}), NOW), {
      action: "backup",
      what: "Job/backup-bao-20261201-030000",
    });
  });

  it("names the manual Job for a new trigger value, nothing for one already handled", () => {
    const c = cluster({ trigger: "t1", backup: { lastAttemptScheduledTime: "2026-12-01T03:00:00Z" } });
    assert.match(plannedBackup(c, NOW)?.what ?? "", /^Job\/backup-bao-manual-[0-9a-f]{8}$/);
    const handled = cluster({
      trigger: "t1",
      backup: { lastAttemptScheduledTime: "2026-12-01T03:00:00Z", lastHandledManualTrigger: "t1" },
    });
    assert.equal(plannedBackup(handled, NOW), undefined);
  });

  it("reports nothing a real run would not start: not initialized, paused, a Job in flight, a bad schedule", () => {
    assert.equal(plannedBackup(cluster({ initialized: false }), NOW), undefined);
    assert.equal(plannedBackup(cluster({ paused: true }), NOW), undefined);
    assert.equal(plannedBackup(cluster({ backup: { jobName: "bao-backup-x" } }), NOW), undefined);
    assert.equal(plannedBackup(cluster({ schedule: "bad" }), NOW), undefined);
  });
});
