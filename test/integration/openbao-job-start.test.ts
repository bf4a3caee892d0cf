import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { crdFor } from "../../src/apis/index.js";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { type OpenBaoRestore, OpenBaoRestoreKind } from "../../src/apis/openbaorestore.js";
import { applyAny } from "../../src/runtime/apply.js";
import { JOB, POD, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import type { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { BackupReconciler } from "../../src/targets/openbao/adminops/backup/reconciler.js";
import { observeHook, startHook } from "../../src/targets/openbao/adminops/upgrade/bluegreen/hook-job.js";
import { ensurePreUpgradeSnapshot } from "../../src/targets/openbao/adminops/upgrade/snapshot/ensure.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { executorRestoreJobs } from "../../src/targets/openbao/restore/defaults.js";
import { RestoreReconciler } from "../../src/targets/openbao/restore/reconciler.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { finishExecutorJob } from "../support/executor-job.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// Jobs whose pod cannot start, on the real API server: the backup and the restore report the pod's
// reason at once, fail past the start bound, end the Job and give the operation lock back, and the
// next operation runs. The shared control plane has no kubelet, scheduler or Job controller: the
// test writes each pod and its status through the status subresource as they would, and drives the
// controllers' clock (each pass is a fresh reconciler: an operator restart costs nothing).

const IMAGE = "registry.invalid/openbao/executor:does-not-exist";
const NAME = "bao";
const TIMEOUT_MS = 5 * 60_000;

describe("openbao Jobs that cannot start free the operation lock", () => {
  let client: KubeClient;
  let ns: string;
  let clock = new Date();
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  const config = parseOpenBaoConfig({ executorImage: IMAGE }, "targets.openbao");
  const events = () => new EventRecorder(client, "platform-operator/openbao", "test", silentLogger());
  const cluster = () => client.get<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns);
  const condition = async (type: string) =>
    (await cluster()).status?.conditions?.find((c) => c.type === type);
  const holder = async () => (await cluster()).status?.operationLock?.holder ?? "";
  const later = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  const backupPass = () =>
    new BackupReconciler({
      client,
      events: events(),
      log: silentLogger(),
      config,
      clusters: { get: () => ({ metadata: {} }) as OpenBaoCluster },
      stores: async () => ({ list: async () => [], delete: async () => {} }),
      now: () => clock,
    }).reconcile(`${ns}/${NAME}`, rc);

  const restorePass = async (name: string) => {
    const cur = await client.get<OpenBaoRestore>(OPENBAORESTORE, name, ns);
    return new RestoreReconciler({
      client,
      events: events(),
      log: silentLogger(),
      restores: { get: () => cur, addHandler: () => {} } as unknown as Informer<OpenBaoRestore>,
      probe: async () => ({ exists: true, size: 10 }),
      jobs: executorRestoreJobs(client, config),
      jobStartTimeoutMs: config.jobStartTimeoutMs,
      now: () => clock,
    }).reconcile(`${ns}/${name}`, rc);
  };
  const restoreCondition = async (name: string, type: string) =>
    (await client.get<OpenBaoRestore>(OPENBAORESTORE, name, ns)).status?.conditions?.find(
      (c) => c.type === type,
    );

  /** The Job controller's pod and what the kubelet or the scheduler then says about it. */
  const stagePod = async (jobName: string, status: Record<string, unknown>, suffix = "p1") => {
    const name = `${jobName}-${suffix}`;
    await client.create<KubeObject>(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace: ns,
        labels: { "batch.kubernetes.io/job-name": jobName, "job-name": jobName },
      },
      spec: { containers: [{ name: "executor", image: IMAGE }] },
    });
    await client.mergePatch(POD, name, ns, { status }, "status");
    return name;
  };
  const waitingStatus = (reason: string, message: string) => ({
    phase: "Pending",
    containerStatuses: [
      {
        name: "executor",
        image: IMAGE,
        imageID: "",
        ready: false,
        restartCount: 0,
        state: { waiting: { reason, message } },
      },
    ],
  });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    await applyAny(client, crdFor(OpenBaoRestoreKind) as unknown as KubeObject, {
      fieldManager: "test-setup",
      force: true,
    });
    for (
      let i = 0;
      i < 300 && !(await client.resources.find("openbao.org/v1alpha1", OpenBaoRestoreKind));
      i++
    ) {
      client.resources.refresh();
      await new Promise((r) => setTimeout(r, 100));
    }
    ns = await freshNamespace(client, "objstart");
    // No ServiceAccount controller here: the staged pods need the namespace's default account.
    await client.apply(
      SERVICE_ACCOUNT,
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: ns } },
      { fieldManager: "test-setup", force: true },
    );
    for (const name of ["backup-token", "s3-creds", "restore-token", `${NAME}-tls-server`])
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace: ns,
          // A static restore token carries upstream's labels, or no restore uses it.
          ...(name === "restore-token"
            ? { labels: { "openbao.org/cluster": NAME, "openbao.org/credential-purpose": "restore-token" } }
            : {}),
        },
        stringData: { token: "s.job-start-not-a-real-token", "ca.crt": "x" },
      });
    await createOpenBaoCluster(client, ns, NAME, {
      replicas: 3,
      backup: {
        // Yearly: no window falls due while the test moves its clock by minutes; triggers drive it.
        schedule: "0 0 1 1 *",
        tokenSecretRef: { name: "backup-token" },
        target: {
          bucket: "snaps",
          endpoint: "http://s3.invalid:9000",
          usePathStyle: true,
          credentialsSecretRef: { name: "s3-creds" },
        },
      },
    });
    await client.mergePatch(
      OPENBAOCLUSTER,
      NAME,
      ns,
      {
        status: {
          initialized: true,
          conditions: [
            {
              type: "Available",
              status: "True",
              reason: "AllReplicasReady",
              message: "3/3",
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
            },
          ],
        },
      },
      "status",
    );
  });
  after(async () => {
    for (const r of (await client.list<KubeObject>(OPENBAORESTORE, { namespace: ns })).items)
      await client
        .mergePatch(OPENBAORESTORE, r.metadata.name!, ns, { metadata: { finalizers: null } })
        .catch(() => {});
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  it("a backup whose image cannot be pulled says so at once, fails at the bound and frees the lock", async () => {
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "pull-1" } },
    });
    await backupPass();
    const jobName = (await cluster()).status!.backup!.jobName!;
    assert.match(jobName, /^backup-bao-manual-/);
    assert.equal(await holder(), `backup/${NAME}/${jobName}`);

    // A pod still being made is no trouble yet.
    later(10_000);
    await backupPass();
    assert.equal((await condition("BackingUp"))?.reason, "InProgress");

    await stagePod(jobName, waitingStatus("ImagePullBackOff", `Back-off pulling image "${IMAGE}"`));
    later(10_000);
    await backupPass();
    const cond = await condition("BackingUp");
    assert.equal(cond?.status, "True");
    assert.equal(cond?.reason, "JobNotStarted");
    assert.match(
      cond!.message,
      new RegExp(`^Job ${jobName} cannot start \\(ImagePullBackOff: .*Back-off pulling image`),
    );
    assert.match(cond!.message, /fails at \d{4}-\d\d-\d\dT/);
    assert.equal(await holder(), `backup/${NAME}/${jobName}`, "within the bound the backup keeps the lock");

    // Past the bound (counted from the attempt): failed like a run that failed, lock released.
    later(TIMEOUT_MS);
    await backupPass();
    const c = await cluster();
    assert.equal(c.status?.backup?.jobName, undefined);
    assert.equal(c.status?.backup?.lastFailureReason, "JobStartTimeout");
    assert.match(
      c.status?.backup?.lastFailureMessage ?? "",
      /did not start within 300s \(ImagePullBackOff: /,
    );
    assert.equal((await condition("BackingUp"))?.reason, "BackupFailed");
    assert.match((await condition("BackingUp"))!.message, /JobStartTimeout/);
    assert.equal(await holder(), "", "the lock outlived a Job that never started");
    // The Job is ended the way a run that fails ends: the Job controller stops it at its deadline.
    const job = await client.get<KubeObject>(JOB, jobName, ns);
    assert.equal((job["spec"] as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, 1);
    assert.match(job.metadata.annotations?.["openbao.org/job-start-failure"] ?? "", /ImagePullBackOff/);
    assert.doesNotMatch(JSON.stringify(c.status), /not-a-real-token/);

    // A restarted operator records nothing twice.
    await backupPass();
    assert.equal((await cluster()).status?.backup?.consecutiveFailures, 1);
  });

  it("the next backup then runs and completes", async () => {
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "pull-2" } },
    });
    later(1000);
    await backupPass();
    const jobName = (await cluster()).status!.backup!.jobName!;
    assert.ok(jobName);
    assert.equal(await holder(), `backup/${NAME}/${jobName}`);
    await finishExecutorJob(client, {
      namespace: ns,
      name: jobName,
      result: { ok: true, operation: "backup", key: "snaps/x.snap", size: 7, durationMs: 5 },
      ok: true,
      at: clock,
      image: IMAGE,
    });
    await backupPass();
    const b = (await cluster()).status!.backup!;
    assert.equal(b.lastBackupKey, "snaps/x.snap");
    assert.equal(b.consecutiveFailures, 0);
    assert.equal(await holder(), "");
  });

  const createRestore = (name: string) =>
    applyAny(
      client,
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: OpenBaoRestoreKind,
        metadata: { name, namespace: ns },
        spec: {
          cluster: NAME,
          source: {
            key: "snaps/x.snap",
            target: {
              bucket: "snaps",
              endpoint: "http://s3.invalid:9000",
              credentialsSecretRef: { name: "s3-creds" },
            },
          },
          tokenSecretRef: { name: "restore-token" },
        },
      },
      { fieldManager: "test-user", force: true },
    );

  it("a restore whose pod cannot be scheduled says so, fails at the bound unchanged, and frees the lock", async () => {
    await createRestore("r-unsched");
    await restorePass("r-unsched");
    await restorePass("r-unsched");
    assert.equal(
      (await client.get<OpenBaoRestore>(OPENBAORESTORE, "r-unsched", ns)).status?.phase,
      "Running",
    );
    assert.equal(await holder(), `restore/${ns}/r-unsched`);
    await stagePod("restore-r-unsched", {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/1 nodes are available: 1 Insufficient memory.",
          lastProbeTime: null,
          lastTransitionTime: clock.toISOString().replace(/\.\d+Z$/, "Z"),
        },
      ],
    });
    later(5000);
    await restorePass("r-unsched");
    const waiting = await restoreCondition("r-unsched", "RestoreComplete");
    assert.equal(waiting?.reason, "JobNotStarted");
    assert.match(waiting!.message, /Unschedulable: pod restore-r-unsched-p1 cannot be scheduled: 0\/1 nodes/);
    assert.equal(await holder(), `restore/${ns}/r-unsched`);

    later(TIMEOUT_MS);
    await restorePass("r-unsched");
    const r = await client.get<OpenBaoRestore>(OPENBAORESTORE, "r-unsched", ns);
    assert.equal(r.status?.phase, "Failed");
    const done = await restoreCondition("r-unsched", "RestoreComplete");
    assert.equal(done?.reason, "RestoreFailed");
    assert.match(
      done!.message,
      /^JobStartTimeout: Job restore-r-unsched did not start within 300s \(Unschedulable/,
    );
    assert.match(r.status?.message ?? "", /the cluster was not changed/);
    assert.equal(await holder(), "");
    const job = await client.get<KubeObject>(JOB, "restore-r-unsched", ns);
    assert.equal((job["spec"] as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, 1);
  });

  it("a restore whose missing Secret appears in time goes on and completes", async () => {
    await createRestore("r-config");
    await restorePass("r-config");
    await restorePass("r-config");
    const pod = await stagePod(
      "restore-r-config",
      waitingStatus("CreateContainerConfigError", 'secret "restore-token" not found'),
    );
    later(5000);
    await restorePass("r-config");
    const waiting = await restoreCondition("r-config", "RestoreComplete");
    assert.equal(waiting?.reason, "JobNotStarted");
    assert.match(waiting!.message, /CreateContainerConfigError: .*secret "restore-token" not found/);
    // The kubelet starts it once the Secret is there: in progress again, then done.
    await client.mergePatch(
      POD,
      pod,
      ns,
      {
        status: {
          phase: "Running",
          containerStatuses: [
            {
              name: "executor",
              image: IMAGE,
              imageID: "",
              ready: true,
              restartCount: 0,
              state: { running: { startedAt: clock.toISOString().replace(/\.\d+Z$/, "Z") } },
            },
          ],
        },
      },
      "status",
    );
    later(TIMEOUT_MS);
    await restorePass("r-config");
    assert.equal((await restoreCondition("r-config", "RestoreComplete"))?.reason, "InProgress");
    assert.equal(await holder(), `restore/${ns}/r-config`);
    await finishExecutorJob(client, {
      namespace: ns,
      name: "restore-r-config",
      result: { ok: true, operation: "restore", key: "snaps/x.snap", size: 10, durationMs: 5 },
      ok: true,
      at: clock,
      image: IMAGE,
    });
    await restorePass("r-config");
    assert.equal(
      (await client.get<OpenBaoRestore>(OPENBAORESTORE, "r-config", ns)).status?.phase,
      "Completed",
    );
    assert.equal(await holder(), "");
  });

  it("a backup with neither a JWT role nor a token Secret is refused, the root-token Secret unused", async () => {
    await createOpenBaoCluster(client, ns, "noauth", {
      replicas: 1,
      backup: {
        schedule: "0 0 1 1 *",
        target: {
          bucket: "snaps",
          endpoint: "http://s3.invalid:9000",
          credentialsSecretRef: { name: "s3-creds" },
        },
      },
    });
    await client.mergePatch(OPENBAOCLUSTER, "noauth", ns, { status: { initialized: true } }, "status");
    // What an operator-initialized cluster keeps: never a backup's login.
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "noauth-root-token", namespace: ns },
      stringData: { token: "s.root-not-a-real-token" },
    });
    await client.mergePatch(OPENBAOCLUSTER, "noauth", ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "no-auth" } },
    });
    await new BackupReconciler({
      client,
      events: events(),
      log: silentLogger(),
      config,
      clusters: { get: () => ({ metadata: {} }) as OpenBaoCluster },
      stores: async () => ({ list: async () => [], delete: async () => {} }),
      now: () => clock,
    }).reconcile(`${ns}/noauth`, rc);
    const c = await client.get<OpenBaoCluster>(OPENBAOCLUSTER, "noauth", ns);
    const cond = c.status?.conditions?.find((x) => x.type === "BackingUp");
    assert.equal(cond?.reason, "AuthenticationRequired");
    assert.match(cond!.message, /spec\.backup\.jwtAuthRole .*spec\.backup\.tokenSecretRef/);
    assert.equal(c.status?.operationLock?.holder ?? "", "");
    const jobs = await client.list<KubeObject>(JOB, {
      namespace: ns,
      labelSelector: "openbao.org/cluster=noauth",
    });
    assert.equal(jobs.items.length, 0);
  });

  it("a pre-upgrade snapshot whose pod cannot start says so, then fails the upgrade's snapshot at the bound", async () => {
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { upgrade: { preUpgradeSnapshot: true } } });
    // These Jobs carry no attempt time of their own: the bound counts from the Job's creation, so the
    // clock here is the wall clock.
    let now = new Date();
    const deps = { client, config, now: () => now };
    const ensure = async () =>
      ensurePreUpgradeSnapshot(deps, await cluster(), {
        upgradeId: "2.7.2-to-2.8.0",
        strategy: "RollingUpdate",
      });
    const first = await ensure();
    assert.equal(first.state, "Running");
    const jobName = first.jobName!;
    await stagePod(jobName, waitingStatus("ErrImagePull", `pull access denied for ${IMAGE}`));
    now = new Date(Date.now() + 5000);
    const stuck = await ensure();
    assert.equal(stuck.state, "Running");
    assert.match(
      stuck.notStarted ?? "",
      new RegExp(`^Job ${jobName} cannot start \\(ErrImagePull: .*pull access denied`),
    );
    now = new Date(Date.now() + TIMEOUT_MS + 5000);
    const failed = await ensure();
    assert.equal(failed.state, "Failed");
    assert.equal(failed.reason, "PreUpgradeBackupFailed");
    assert.match(failed.message ?? "", /JobStartTimeout.*did not start within 300s \(ErrImagePull/);
    const job = await client.get<KubeObject>(JOB, jobName, ns);
    assert.equal((job["spec"] as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, 1);
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { upgrade: null } });
  });

  it("a validation hook whose pod cannot start is a failed validation at the bound", async () => {
    const bg = { operationID: "op-1", greenRevision: "g1", greenVersion: "2.8.0" };
    await startHook({ client, events: events() }, await cluster(), bg, { image: IMAGE }, "cluster.local");
    const jobName = `${NAME}-validation-hook`;
    await client.get<KubeObject>(JOB, jobName, ns);
    const pod = `${jobName}-p1`;
    await client.create<KubeObject>(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: pod, namespace: ns, labels: { "batch.kubernetes.io/job-name": jobName } },
      spec: { containers: [{ name: "validation", image: IMAGE }] },
    });
    await client.mergePatch(
      POD,
      pod,
      ns,
      {
        status: {
          phase: "Pending",
          containerStatuses: [
            {
              name: "validation",
              image: IMAGE,
              imageID: "",
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: "InvalidImageName", message: "couldn't parse image name" } },
            },
          ],
        },
      },
      "status",
    );
    const seen = await observeHook(client, await cluster(), bg, {
      now: new Date(Date.now() + 5000),
      timeoutMs: TIMEOUT_MS,
    });
    assert.equal(seen.state, "Running");
    assert.match(
      seen.notStarted ?? "",
      /InvalidImageName: pod bao-validation-hook-p1: container validation is in InvalidImageName/,
    );
    const late = await observeHook(client, await cluster(), bg, {
      now: new Date(Date.now() + TIMEOUT_MS + 5000),
      timeoutMs: TIMEOUT_MS,
    });
    assert.equal(late.state, "Failed");
    assert.match(
      late.message ?? "",
      /^never started: Job bao-validation-hook did not start within 300s \(InvalidImageName/,
    );
    // Once the Job controller has failed it, the same verdict is read back from the Job.
    await client.mergePatch(
      JOB,
      jobName,
      ns,
      {
        status: {
          startTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
          failed: 1,
          conditions: ["FailureTarget", "Failed"].map((type) => ({
            type,
            status: "True",
            reason: "DeadlineExceeded",
            message: "Job was active longer than specified deadline",
            lastProbeTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
          })),
        },
      },
      "status",
    );
    const after = await observeHook(client, await cluster(), bg);
    assert.equal(after.state, "Failed");
    assert.match(after.message ?? "", /^never started: /);
  });
});
