import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { JOB, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { BackupReconciler } from "../../src/targets/openbao/adminops/backup/reconciler.js";
import { setUpgrading, UpgradeReason } from "../../src/targets/openbao/adminops/upgrade/core/condition.js";
import { type UpgradeStatus, writeUpgrade } from "../../src/targets/openbao/adminops/upgrade/core/status.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import {
  ADMINOPS_FIELD_MANAGER,
  AdminOpsPass,
  adminOpsPlaneOf,
  LOCK_FIELD_MANAGER,
  writeAdminOpsConcern,
} from "../../src/targets/openbao/opslifecycle/index.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { finishExecutorJob } from "../support/executor-job.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// A rolling pass that lowers the partition makes three AdminOps plane changes: status.upgrade, the
// Upgrading condition, and (after earlier failures) clearing consecutiveFailures. Written at once,
// each is a fresh GET plus a conditional apply; staged in the pass, they are one GET and one apply.
// Both ways are run here against the real API server, counting the requests on the cluster.
// A backup's passes run the real BackupReconciler the same way. Before its changes were staged,
// the idle pass made 3 GETs + 2 applies, the start 5 GETs + 3 applies (+ the lock), the recording
// 4 GETs + 2 applies (+ the lock); staged, each makes one AdminOps apply.

interface Counts {
  gets: number;
  statusApplies: number;
  /** Status applies by field manager. */
  byManager: Record<string, number>;
}

/** The client with its OpenBaoCluster GETs and status applies counted. */
function counting(client: KubeClient): { client: KubeClient; counts: Counts } {
  const counts: Counts = { gets: 0, statusApplies: 0, byManager: {} };
  const wrapped = new Proxy(client, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const kind = (args[0] as { kind?: string } | undefined)?.kind;
        if (kind === OPENBAOCLUSTER.kind && (prop === "get" || prop === "getOrUndefined")) counts.gets++;
        if (kind === OPENBAOCLUSTER.kind && prop === "applyStatus") {
          counts.statusApplies++;
          const m = (args[2] as { fieldManager?: string } | undefined)?.fieldManager ?? "";
          counts.byManager[m] = (counts.byManager[m] ?? 0) + 1;
        }
        return v.apply(target, args);
      };
    },
  });
  return { client: wrapped, counts };
}

describe("openbao AdminOps: one status write per pass", () => {
  let client: KubeClient;
  let ns: string;
  const events = () => new EventRecorder(client, "platform-operator/openbao", "test", silentLogger());
  const now = new Date("2026-12-06T12:00:00Z");
  const inFlight: UpgradeStatus = {
    targetVersion: "2.7.2",
    fromVersion: "2.6.2",
    startedAt: "2026-12-06T11:00:00Z",
    currentPartition: 2,
    completedPods: [],
    consecutiveFailures: 2,
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obpass");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  /** What lowerPartition, its condition and clearFailures do, through `to`. */
  async function lowerPartitionPass(to: KubeClient | AdminOpsPass, name: string): Promise<boolean> {
    const ref = { name, namespace: ns };
    const cluster = await client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);
    const w = await writeUpgrade(to, ref, (cur) =>
      cur && cur.currentPartition === 2 ? { upgrade: { ...cur, currentPartition: 1 } } : undefined,
    );
    await setUpgrading(
      to,
      events(),
      cluster,
      { status: "True", reason: UpgradeReason.InProgress, message: "upgrading: replacing pod 1" },
      now,
    );
    await writeUpgrade(to, ref, (cur) => {
      if (!cur?.consecutiveFailures) return undefined;
      const { consecutiveFailures: _cleared, ...rest } = cur;
      return { upgrade: rest };
    });
    return w.wrote;
  }

  async function seeded(name: string): Promise<void> {
    await createOpenBaoCluster(client, ns, name, { version: "2.7.2", replicas: 3 });
    await writeAdminOpsConcern(client, { name, namespace: ns }, "upgrade", () => inFlight);
  }

  const planeOf = async (name: string) => {
    const plane = adminOpsPlaneOf((await client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns)).status);
    for (const c of plane.conditions ?? []) c.lastTransitionTime = "-";
    return plane;
  };

  it("three changes: 3 GETs + 3 applies written at once, 1 GET + 1 apply staged; the same status", async () => {
    await seeded("at-once");
    await seeded("staged");

    const before = counting(client);
    assert.equal(await lowerPartitionPass(before.client, "at-once"), true);

    const after = counting(client);
    const pass = new AdminOpsPass(after.client, { name: "staged", namespace: ns });
    assert.equal(await lowerPartitionPass(pass, "staged"), true, "the change is known when staged");
    assert.deepEqual(
      after.counts,
      { gets: 1, statusApplies: 0, byManager: {} },
      "nothing is written before the commit",
    );
    assert.deepEqual(await pass.commit(), { wrote: true });

    assert.deepEqual({ ...before.counts, byManager: {} }, { gets: 3, statusApplies: 3, byManager: {} });
    assert.deepEqual({ ...after.counts, byManager: {} }, { gets: 1, statusApplies: 1, byManager: {} });
    const a = await planeOf("at-once");
    assert.equal(a.upgrade?.currentPartition, 1);
    assert.equal(a.upgrade?.consecutiveFailures, undefined);
    assert.equal(a.conditions?.find((c) => c.type === "Upgrading")?.reason, UpgradeReason.InProgress);
    assert.deepEqual(await planeOf("staged"), a, "the one write leaves what the three did");

    // A pass that changes nothing writes nothing, staged or not.
    const quiet = counting(client);
    const again = new AdminOpsPass(quiet.client, { name: "staged", namespace: ns });
    assert.equal(await lowerPartitionPass(again, "staged"), false);
    assert.deepEqual(await again.commit(), { wrote: false });
    assert.equal(quiet.counts.statusApplies, 0);
  });

  it("another writer between the read and the commit: the staged changes are replayed on its write", async () => {
    await seeded("raced");
    const ref = { name: "raced", namespace: ns };
    const pass = new AdminOpsPass(client, ref);
    await lowerPartitionPass(pass, "raced");
    // The backup concern changes under the same plane meanwhile (a conditional write of its own).
    await writeAdminOpsConcern(client, ref, "backup", () => ({ lastBackupName: "b-1" }));
    assert.deepEqual(await pass.commit(), { wrote: true });
    const plane = await planeOf("raced");
    assert.equal(plane.backup?.lastBackupName, "b-1", "the other writer's change is kept");
    assert.equal(plane.upgrade?.currentPartition, 1, "and the pass's changes land");
    assert.equal(plane.upgrade?.consecutiveFailures, undefined);
  });
  it("a backup, idle → started → recorded: one AdminOps apply per pass (the lock apart), the same status as before", async () => {
    const name = "bk";
    await client.create(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    });
    for (const [secret, data] of [
      ["backup-token", { token: "s.not-a-real-token" }],
      ["s3-creds", { accessKeyId: "a", secretAccessKey: "b" }],
      [`${name}-tls-server`, { "ca.crt": "x" }],
    ] as const)
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: secret, namespace: ns },
        stringData: data,
      });
    await createOpenBaoCluster(client, ns, name, {
      replicas: 3,
      backup: {
        schedule: "0 3 * * *",
        tokenSecretRef: { name: "backup-token" },
        target: {
          bucket: "snaps",
          endpoint: "http://s3.invalid:9000",
          credentialsSecretRef: { name: "s3-creds" },
        },
      },
    });
    await client.mergePatch(OPENBAOCLUSTER, name, ns, { status: { initialized: true } }, "status");
    // The clock just before the next 03:00 after the cluster's creation (no window lies between).
    const t = Date.now();
    const next = new Date(t);
    next.setUTCHours(3, 0, 0, 0);
    if (next.getTime() <= t) next.setTime(next.getTime() + 24 * 3600_000);
    let clock = new Date(Math.max(t, next.getTime() - 60_000));
    const counted = async () => {
      const c = counting(client);
      const r = new BackupReconciler({
        client: c.client,
        events: events(),
        log: silentLogger(),
        config: parseOpenBaoConfig({ executorImage: "localhost/platform-operator:dev" }, "targets.openbao"),
        clusters: { get: () => ({ metadata: {} }) as OpenBaoCluster },
        stores: async () => ({ list: async () => [], delete: async () => {} }),
        now: () => clock,
      });
      await r.reconcile(`${ns}/${name}`, { log: silentLogger(), signal: new AbortController().signal });
      return c.counts;
    };
    const plane = (c: Counts) => c.byManager[ADMINOPS_FIELD_MANAGER] ?? 0;
    const lock = (c: Counts) => c.byManager[LOCK_FIELD_MANAGER] ?? 0;
    const current = () => client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);

    // Idle: the next window and BackingUp=Idle, two changes.
    const idle = await counted();
    assert.equal((await current()).status?.conditions?.find((c) => c.type === "BackingUp")?.reason, "Idle");
    assert.ok((await current()).status?.backup?.nextScheduledBackup);

    // The window comes: the lock, then the attempt and BackingUp=InProgress, written before the Job.
    clock = new Date(clock.getTime() + 90_000);
    const started = await counted();
    const jobName = (await current()).status?.backup?.jobName;
    assert.ok(jobName);
    assert.equal((await current()).status?.operationLock?.operation, "Backup");
    const job = await client.get<KubeObject>(JOB, jobName, ns);
    const key = job.metadata.annotations!["openbao.org/backup-key"]!;

    // The Job succeeds: the result and BackingUp=Succeeded, then the lock is released.
    await finishExecutorJob(client, {
      namespace: ns,
      name: jobName,
      result: { ok: true, operation: "backup", key, size: 10, durationMs: 500 },
      ok: true,
      at: clock,
    });
    const recorded = await counted();
    const after = await current();
    assert.equal(after.status?.backup?.jobName, undefined);
    assert.equal(after.status?.backup?.lastBackupKey, key);
    assert.equal(after.status?.conditions?.find((c) => c.type === "BackingUp")?.reason, "BackupSucceeded");
    assert.equal(after.status?.operationLock?.holder ?? "", "");

    // Nothing due: nothing written.
    const quiet = await counted();

    const seen = [idle, started, recorded, quiet].map((c) => ({
      gets: c.gets,
      plane: plane(c),
      lock: lock(c),
    }));
    assert.deepEqual(seen, [
      { gets: 2, plane: 1, lock: 0 },
      { gets: 3, plane: 1, lock: 1 },
      { gets: 3, plane: 1, lock: 1 },
      { gets: 1, plane: 0, lock: 0 },
    ]);
  });
});
