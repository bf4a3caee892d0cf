import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import type { SnapshotStore } from "../../src/targets/openbao/adminops/backup/ports.js";
import { BackupReconciler } from "../../src/targets/openbao/adminops/backup/reconciler.js";
import type { StoredSnapshot } from "../../src/targets/openbao/adminops/backup/retention.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { OperationLockStore } from "../../src/targets/openbao/opslifecycle/index.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { finishExecutorJob } from "../support/executor-job.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// The backup controller's state machine against the real API server, with the clock in the test's
// hand. The shared control plane runs no Job controller and no node, so a Job stays exactly as the
// test leaves it: the test plays the executor by writing the Job's terminal status and its pod's
// termination message, and each "operator restart" is a new reconciler with no memory.
// The executor, the object store and the pods are real in openbao-backup.test.ts.

const SECRET: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
const SERVICE_ACCOUNT: ResourceType = {
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
};
const NAME = "bao";

/** Object store double for retention: this file tests the controller, not a store. */
class MemoryStore implements SnapshotStore {
  readonly objects = new Map<string, Date>();
  readonly deleted: string[] = [];
  async list(prefix: string): Promise<StoredSnapshot[]> {
    return [...this.objects]
      .filter(([k]) => k.startsWith(prefix))
      .map(([key, lastModified]) => ({ key, lastModified }));
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
    this.deleted.push(key);
  }
}

describe("openbao backup controller: windows, the lock and results on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let clock = new Date("2026-12-01T02:59:00Z");
  const store = new MemoryStore();
  const rc = { log: silentLogger(), signal: new AbortController().signal };

  /** A fresh reconciler: what a restarted operator would run. */
  const reconciler = () =>
    new BackupReconciler({
      client,
      events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
      log: silentLogger(),
      config: parseOpenBaoConfig({ executorImage: "localhost/platform-operator:dev" }, "targets.openbao"),
      clusters: { get: () => ({ metadata: {} }) as OpenBaoCluster },
      stores: async () => store,
      now: () => clock,
    });
  const pass = (r = reconciler()) => r.reconcile(`${ns}/${NAME}`, rc);
  const cluster = () => client.get<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns);
  const backupJobs = async () =>
    (await client.list<KubeObject>(JOB, { namespace: ns, labelSelector: "openbao.org/component=backup" }))
      .items;
  const backingUp = async () => (await cluster()).status?.conditions?.find((c) => c.type === "BackingUp");

  /** Plays the executor: the pod's termination message and the Job's terminal conditions. */
  const finishJob = (name: string, result: Record<string, unknown> | undefined, ok: boolean) =>
    finishExecutorJob(client, { namespace: ns, name, result, ok, at: clock });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obbk");
    // No ServiceAccount controller here: the pods the test writes need their account by hand.
    await client.create(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    });
    await createOpenBaoCluster(client, ns, NAME, {
      replicas: 3,
      backup: {
        schedule: "0 3 * * *",
        tokenSecretRef: { name: "backup-token" },
        retention: { maxCount: 2 },
        target: {
          bucket: "snaps",
          endpoint: "http://s3.invalid:9000",
          usePathStyle: true,
          credentialsSecretRef: { name: "s3-creds" },
          workloadIdentity: {
            serviceAccountAnnotations: {
              "iam.gke.io/gcp-service-account": "backup@p.iam.gserviceaccount.com",
            },
            podLabels: { "azure.workload.identity/use": "true" },
          },
        },
      },
    });
    // Backdate nothing: the cluster exists from "now" on, and the clock starts just before the
    // first 03:00 after that, so no window lies between its creation and the first pass (a clock a
    // day ahead at 02:59 found today's window due when the run started between 00:00 and 03:00).
    const now = Date.now();
    const next = new Date(now);
    next.setUTCHours(3, 0, 0, 0);
    if (next.getTime() <= now) next.setTime(next.getTime() + 24 * 3600_000);
    clock = new Date(Math.max(now, next.getTime() - 60_000));
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("names each missing prerequisite and creates no Job", async () => {
    await pass();
    assert.equal((await backingUp())?.reason, "Idle");
    // 03:00 passes; the cluster is not initialized yet.
    clock = new Date(clock.getTime() + 90_000);
    await pass();
    assert.equal((await backingUp())?.reason, "ClusterNotReady");
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { status: { initialized: true } }, "status");
    await pass();
    let cond = await backingUp();
    assert.equal(cond?.reason, "NoBackupToken");
    assert.match(cond!.message, /Secret backup-token .*tokenSecretRef/);
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "backup-token", namespace: ns },
      stringData: { token: "s.not-a-real-token" },
    });
    await pass();
    cond = await backingUp();
    assert.equal(cond?.reason, "PrerequisitesMissing");
    assert.match(cond!.message, /Secret s3-creds/);
    assert.doesNotMatch(JSON.stringify(await cluster()), /not-a-real-token/);
    assert.equal((await backupJobs()).length, 0);
  });

  it("launches one Job for the window, persisted before the Job, and holds the lock", async () => {
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s3-creds", namespace: ns },
      stringData: { accessKeyId: "a", secretAccessKey: "b" },
    });
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${NAME}-tls-server`, namespace: ns },
      stringData: { "ca.crt": "x" },
    });
    await pass();
    const jobs = await backupJobs();
    assert.equal(jobs.length, 1);
    const window = new Date(clock);
    window.setUTCHours(3, 0, 0, 0);
    const stamp = window.toISOString().replace(/\.\d+Z$/, "Z");
    const c = await cluster();
    assert.equal(jobs[0]!.metadata.name, c.status?.backup?.jobName);
    // Upstream's name and label: backup-<cluster>-<UTC yyyymmdd-hhmmss>, openbao.org/backup-type.
    assert.match(jobs[0]!.metadata.name!, /^backup-bao-\d{8}-030000$/);
    assert.equal(jobs[0]!.metadata.labels?.["openbao.org/backup-type"], "scheduled");
    // target.workloadIdentity: the cloud's webhook reads the account's annotation and the pod's label.
    const job = jobs[0] as KubeObject & {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    assert.equal(job.spec.template.metadata.labels["azure.workload.identity/use"], "true");
    const sa = await client.get<KubeObject>(SERVICE_ACCOUNT, `${NAME}-backup-serviceaccount`, ns);
    assert.equal(
      sa.metadata.annotations?.["iam.gke.io/gcp-service-account"],
      "backup@p.iam.gserviceaccount.com",
    );
    assert.equal(c.status?.backup?.lastAttemptScheduledTime, stamp);
    assert.equal(c.status?.operationLock?.operation, "Backup");
    assert.equal(c.status?.operationLock?.holder, `backup/${NAME}/${jobs[0]!.metadata.name}`);
    assert.equal((await backingUp())?.status, "True");
    // A restarted operator, twice, in the same window: still one Job, same lock.
    await pass();
    await pass(reconciler());
    assert.equal((await backupJobs()).length, 1);
    assert.equal((await cluster()).status?.operationLock?.holder, c.status?.operationLock?.holder);
  });

  it("records a success once, runs retention, releases the lock", async () => {
    const jobName = (await cluster()).status!.backup!.jobName!;
    const key = (await client.get<KubeObject>(JOB, jobName, ns)).metadata.annotations![
      "openbao.org/backup-key"
    ]!;
    // Older snapshots in the store: retention keeps two (the new one and the newest old one).
    for (const d of ["20261101T030000Z", "20261102T030000Z", "20261103T030000Z"])
      store.objects.set(`${ns}/${NAME}/${d}-00000000.snap`, new Date("2026-11-05T00:00:00Z"));
    store.objects.set(key, clock);
    await finishJob(jobName, { ok: true, operation: "backup", key, size: 4242, durationMs: 1500 }, true);
    await pass();
    await pass(reconciler());
    const b = (await cluster()).status!.backup!;
    assert.equal(b.jobName, undefined);
    assert.equal(b.lastBackupKey, key);
    assert.equal(b.lastBackupSize, 4242);
    assert.equal(b.lastBackupDuration, "1.5s");
    assert.equal(b.consecutiveFailures, 0);
    assert.ok(b.lastBackupTime);
    assert.equal((await cluster()).status?.lastBackupTime, b.lastBackupTime);
    assert.equal((await cluster()).status?.operationLock?.holder ?? "", "");
    assert.deepEqual(
      [...store.objects.keys()].sort(),
      [`${ns}/${NAME}/20261103T030000Z-00000000.snap`, key].sort(),
    );
    assert.equal((await backupJobs()).length, 1);
  });

  it("two triggers with one value launch once; a failure keeps the last success and frees the lock", async () => {
    const before = (await cluster()).status!.backup!;
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "t-1" } },
    });
    await pass();
    await pass(reconciler());
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "t-1" } },
    });
    await pass();
    const jobs = await backupJobs();
    assert.equal(jobs.length, 2, "the window's Job and one manual Job");
    const manual = (await cluster()).status!.backup!;
    assert.equal(manual.lastHandledManualTrigger, "t-1");
    assert.match(manual.jobName!, /^backup-bao-manual-/);
    const manualJob = jobs.find((j) => j.metadata.name === manual.jobName);
    assert.equal(manualJob?.metadata.labels?.["openbao.org/backup-type"], "manual");
    // The pod is killed before it reports: no result line.
    await finishJob(manual.jobName!, undefined, false);
    await pass();
    const after = (await cluster()).status!.backup!;
    assert.equal(after.consecutiveFailures, 1);
    assert.equal(after.lastFailureReason, "Interrupted");
    assert.equal(after.lastBackupTime, before.lastBackupTime);
    assert.equal(after.lastBackupKey, before.lastBackupKey);
    assert.equal((await cluster()).status?.operationLock?.holder ?? "", "");
    // The same value again asks for nothing.
    await pass();
    assert.equal((await backupJobs()).length, 2);
  });

  it("waits for a lock another operation holds, without taking it", async () => {
    const locks = new OperationLockStore(client, { now: () => clock });
    const restore = { operation: "Restore" as const, holder: `restore/${ns}/r1` };
    const got = await locks.acquire({ name: NAME, namespace: ns }, restore);
    assert.equal(got.acquired, true);
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "t-2" } },
    });
    await pass();
    const cond = await backingUp();
    assert.equal(cond?.reason, "OperationLockHeld");
    assert.match(cond!.message, /Restore .*restore\//);
    assert.equal((await cluster()).status?.operationLock?.holder, restore.holder);
    assert.equal((await backupJobs()).length, 2);
    await locks.release({ name: NAME, namespace: ns }, restore);
    await pass();
    assert.equal((await backupJobs()).length, 3);
    assert.equal((await cluster()).status?.backup?.lastHandledManualTrigger, "t-2");
  });

  it("resumes after a crash between taking the lock and persisting the attempt", async () => {
    // Finish the t-2 Job first.
    const jobName = (await cluster()).status!.backup!.jobName!;
    await finishJob(
      jobName,
      { ok: true, operation: "backup", key: "k/x.snap", size: 1, durationMs: 1 },
      true,
    );
    await pass();
    // The crash: a backup identity holds the lock, but no attempt was persisted.
    const locks = new OperationLockStore(client, { now: () => clock });
    const orphan = { operation: "Backup" as const, holder: `backup/${NAME}/backup-bao-manual-deadbeef` };
    await locks.acquire({ name: NAME, namespace: ns }, orphan);
    await pass(reconciler());
    assert.equal((await cluster()).status?.operationLock?.holder ?? "", "");
    assert.equal((await backupJobs()).length, 3);
  });

  it("refuses a bad schedule with a condition naming the field", async () => {
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { backup: { schedule: "every day" } } });
    await pass();
    const cond = await backingUp();
    assert.equal(cond?.reason, "InvalidSchedule");
    assert.match(cond!.message, /^spec\.backup\.schedule: /);
  });
});
