import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { blueGreenSnapshotJobName } from "../../src/targets/openbao/adminops/upgrade/job-names.js";
import {
  ensurePreUpgradeSnapshot,
  type PreUpgradeSnapshotDeps,
} from "../../src/targets/openbao/adminops/upgrade/snapshot/index.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { finishExecutorJob } from "../support/executor-job.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// The pre-upgrade snapshot against the real API server. The shared control plane runs no Job
// controller and no node, so a Job stays as the test leaves it: the test plays the executor by
// writing the Job's terminal status and its pod's termination message. Every call uses fresh
// dependencies, as a restarted operator would: nothing but the cluster and the Job carry state.

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
const TOKEN = "s.pre-upgrade-not-a-real-token";

describe("openbao pre-upgrade snapshot on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  const clock = new Date("2026-12-01T10:00:00Z");

  const deps = (): PreUpgradeSnapshotDeps => ({
    client,
    config: { executorImage: "localhost/platform-operator:dev" },
    now: () => clock,
  });
  const cluster = () => client.get<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns);
  const ensure = async (upgradeId: string, strategy?: "RollingUpdate" | "BlueGreen") =>
    ensurePreUpgradeSnapshot(deps(), await cluster(), { upgradeId, ...(strategy ? { strategy } : {}) });
  /** Every pre-upgrade snapshot Job of the cluster, whatever its name and component. */
  const upgradeJobs = async () =>
    (
      await client.list<KubeObject>(JOB, { namespace: ns, labelSelector: `openbao.org/cluster=${NAME}` })
    ).items.filter((j) => j.metadata.annotations?.["openbao.org/backup-type"] === "pre-upgrade");
  const generation = async () => (await cluster()).metadata.generation;
  const patchSpec = (spec: Record<string, unknown>) => client.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec });
  const secret = (name: string, data: Record<string, string>) =>
    client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns },
      stringData: data,
    });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obsnap");
    // No ServiceAccount controller here: the pods the test writes need their account by hand.
    await client.create(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    });
    await createOpenBaoCluster(client, ns, NAME, { version: "2.7.2", replicas: 3 });
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("not asked for: nothing happens", async () => {
    assert.deepEqual(await ensure("2.6.2-to-2.7.2"), { state: "NotRequested" });
    assert.equal((await upgradeJobs()).length, 0);
  });

  it("asked for without a backup target or login: Failed, naming the field, and no Job", async () => {
    await patchSpec({ upgrade: { preUpgradeSnapshot: true } });
    const noTarget = await ensure("2.6.2-to-2.7.2");
    assert.equal(noTarget.state, "Failed");
    assert.equal(noTarget.reason, "PrerequisitesMissing");
    assert.match(noTarget.message!, /spec\.backup\.target/);

    await patchSpec({
      backup: {
        schedule: "0 3 * * *",
        target: {
          bucket: "snaps",
          endpoint: "http://s3.invalid:9000",
          usePathStyle: true,
          credentialsSecretRef: { name: "s3-creds" },
        },
      },
    });
    const noLogin = await ensure("2.6.2-to-2.7.2");
    assert.equal(noLogin.reason, "AuthenticationRequired");

    // spec.upgrade.tokenSecretRef is refused by the API server (as upstream does): the token is backup's.
    await patchSpec({
      upgrade: { preUpgradeSnapshot: true },
      backup: { tokenSecretRef: { name: "upgrade-token" } },
    });
    const noToken = await ensure("2.6.2-to-2.7.2");
    assert.equal(noToken.reason, "NoBackupToken");
    assert.match(noToken.message!, /upgrade-token \(spec\.backup\.tokenSecretRef\)/);
    assert.equal((await upgradeJobs()).length, 0);
  });

  it("creates one Job under upstream's rolling name and labels; asking again (a restart, a spec edit) finds it", async () => {
    await secret("upgrade-token", { token: TOKEN });
    await secret("s3-creds", { accessKeyId: "a", secretAccessKey: "b" });
    await secret(`${NAME}-tls-server`, { "ca.crt": "x" });
    const first = await ensure("2.6.2-to-2.7.2");
    assert.equal(first.state, "Running", first.message);
    assert.equal(first.jobName, `pre-upgrade-backup-${NAME}-gen${await generation()}`);
    const jobs = await upgradeJobs();
    assert.equal(jobs.length, 1);
    const job = jobs[0]!;
    assert.equal(job.metadata.name, first.jobName);
    assert.equal(job.metadata.annotations?.["openbao.org/backup-type"], "pre-upgrade");
    assert.equal(job.metadata.labels?.["openbao.org/backup-type"], "pre-upgrade", "upstream's label too");
    assert.equal(
      job.metadata.labels?.["openbao.org/component"],
      "backup",
      "upstream's rolling one is a backup",
    );
    assert.equal(job.metadata.annotations?.["openbao.org/upgrade-run-id"], "2.6.2-to-2.7.2");
    assert.equal(job.metadata.annotations?.["openbao.org/backup-key"], first.key);
    assert.match(first.key!, new RegExp(`^${ns}/${NAME}/20261201T100000Z-pre-upgrade-[0-9a-f]{8}\\.snap$`));
    const podSpec = (job["spec"] as { template: { spec: Record<string, unknown> } }).template.spec;
    // spec.backup's login (spec.upgrade names none): backup's ServiceAccount, created and owned by the cluster.
    assert.equal(podSpec["serviceAccountName"], `${NAME}-backup-serviceaccount`);
    const sa = await client.get<KubeObject>(SERVICE_ACCOUNT, `${NAME}-backup-serviceaccount`, ns);
    assert.equal(sa.metadata.ownerReferences?.[0]?.name, NAME);
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, "OpenBaoCluster");
    assert.ok(!JSON.stringify(job).includes(TOKEN), "the token reached the Job spec");

    // A restarted operator asks again, the clock moved on and the spec was edited (a new generation,
    // so upstream's name would differ): the same Job, no second one.
    clock.setTime(clock.getTime() + 60_000);
    await patchSpec({ backup: { schedule: "0 4 * * *" } });
    const again = await ensure("2.6.2-to-2.7.2");
    assert.equal(again.state, "Running");
    assert.equal(again.jobName, first.jobName);
    assert.equal(again.key, first.key);
    const after = await upgradeJobs();
    assert.equal(after.length, 1);
    assert.equal(after[0]!.metadata.uid, job.metadata.uid);
  });

  it("reads a succeeded Job back, with the executor's key", async () => {
    const [job] = await upgradeJobs();
    const jobName = job!.metadata.name!;
    const key = job!.metadata.annotations!["openbao.org/backup-key"]!;
    await finishExecutorJob(client, {
      namespace: ns,
      name: jobName,
      result: { ok: true, operation: "backup", key, size: 4096, durationMs: 800 },
      ok: true,
      at: clock,
    });
    const done = await ensure("2.6.2-to-2.7.2");
    assert.deepEqual(
      { state: done.state, jobName: done.jobName, key: done.key },
      { state: "Succeeded", jobName, key },
    );
    assert.match(done.message!, /4096 bytes/);
  });

  it("a failed Job is PreUpgradeBackupFailed and stays so: no second Job for that upgrade", async () => {
    // A new upgrade is a new spec.version: a new generation, so upstream's name is free.
    await patchSpec({ version: "2.8.0" });
    const id = "2.7.2-to-2.8.0";
    const started = await ensure(id);
    assert.equal(started.state, "Running");
    await finishExecutorJob(client, {
      namespace: ns,
      name: started.jobName!,
      result: {
        ok: false,
        operation: "backup",
        key: started.key,
        reason: "UploadFailed",
        error: "PutObject: connection refused",
      },
      ok: false,
      at: clock,
    });
    for (let i = 0; i < 2; i++) {
      const failed = await ensure(id);
      assert.equal(failed.state, "Failed");
      assert.equal(failed.reason, "PreUpgradeBackupFailed");
      assert.equal(failed.jobName, started.jobName);
      assert.match(failed.message!, /UploadFailed.*connection refused/);
    }
    const jobs = (await upgradeJobs()).filter((j) => j.metadata.name === started.jobName);
    assert.equal(jobs.length, 1);
    assert.equal((await upgradeJobs()).length, 2, "one Job per upgrade id");
  });

  it("falls back to spec.backup's login and its ServiceAccount when spec.upgrade names none", async () => {
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      spec: { backup: { tokenSecretRef: null, jwtAuthRole: "backup-role" } },
    });
    const r = await ensure("2.8.0-to-2.9.0");
    assert.equal(r.state, "Running", r.message);
    const job = await client.get<KubeObject>(JOB, r.jobName!, ns);
    const podSpec = (job["spec"] as { template: { spec: Record<string, unknown> } }).template.spec;
    assert.equal(podSpec["serviceAccountName"], `${NAME}-backup-serviceaccount`);
    assert.match(JSON.stringify(podSpec), /backup-role/);
  });
  it("another upgrade's Job under the same name: a running one is waited for, a finished one goes first", async () => {
    // Same generation, another upgrade id (only a changed running version does this): upstream's
    // rolling name is taken by 2.8.0-to-2.9.0's Job, still running.
    const [occupant] = (await upgradeJobs()).filter(
      (j) => j.metadata.annotations?.["openbao.org/upgrade-run-id"] === "2.8.0-to-2.9.0",
    );
    const name = occupant!.metadata.name!;
    const waiting = await ensure("2.8.0-to-2.9.1");
    assert.equal(waiting.state, "Running");
    assert.match(waiting.message!, /still runs/);
    assert.equal((await client.get<KubeObject>(JOB, name, ns)).metadata.uid, occupant!.metadata.uid);

    await finishExecutorJob(client, {
      namespace: ns,
      name,
      result: { ok: true, operation: "backup", key: "k", size: 1, durationMs: 1 },
      ok: true,
      at: clock,
    });
    const cleared = await ensure("2.8.0-to-2.9.1");
    assert.equal(cleared.state, "Running");
    assert.match(cleared.message!, /deleted the finished Job/);
    assert.equal(await client.getOrUndefined(JOB, name, ns), undefined);
    const made = await ensure("2.8.0-to-2.9.1");
    assert.equal(made.state, "Running", made.message);
    assert.equal(made.jobName, name);
    const job = await client.get<KubeObject>(JOB, name, ns);
    assert.notEqual(job.metadata.uid, occupant!.metadata.uid);
    assert.equal(job.metadata.annotations?.["openbao.org/upgrade-run-id"], "2.8.0-to-2.9.1");
  });

  it("a Job this operator made under its earlier name (<name>-pre-upgrade-<hash>) is still its upgrade's", async () => {
    const legacy = `${NAME}-pre-upgrade-1234abcd`;
    await client.create(JOB, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: legacy,
        namespace: ns,
        labels: {
          "openbao.org/cluster": NAME,
          "openbao.org/component": "upgrade",
          "openbao.org/backup-type": "pre-upgrade",
        },
        annotations: {
          "openbao.org/backup-type": "pre-upgrade",
          "openbao.org/upgrade-run-id": "2.9.1-to-3.0.0",
          "openbao.org/backup-key": `${ns}/${NAME}/old.snap`,
        },
      },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: "Never",
            containers: [{ name: "executor", image: "localhost/platform-operator:dev" }],
          },
        },
      },
    });
    const before = (await upgradeJobs()).length;
    const r = await ensure("2.9.1-to-3.0.0");
    assert.deepEqual(
      { state: r.state, jobName: r.jobName, key: r.key },
      { state: "Running", jobName: legacy, key: `${ns}/${NAME}/old.snap` },
    );
    assert.equal((await upgradeJobs()).length, before, "no second Job for that upgrade");
  });

  it("blue-green: upstream's upgrade-<name>-preupgrade-snapshot-<hash>, component upgrade-snapshot", async () => {
    const c = await cluster();
    const r = await ensure("3.0.0-to-3.1.0", "BlueGreen");
    assert.equal(r.state, "Running", r.message);
    const expected = blueGreenSnapshotJobName({
      cluster: NAME,
      currentVersion: c.status?.currentVersion ?? "",
      version: c.spec.version,
      image: c.spec.image ?? "",
      replicas: c.spec.replicas ?? 3,
      blueRevision: c.status?.blueGreen?.blueRevision ?? "",
    });
    assert.equal(r.jobName, expected);
    assert.match(expected, /^upgrade-bao-preupgrade-snapshot-[0-9a-f]{10}$/);
    const job = await client.get<KubeObject>(JOB, expected, ns);
    assert.equal(job.metadata.labels?.["openbao.org/component"], "upgrade-snapshot");
    assert.equal(job.metadata.labels?.["openbao.org/backup-type"], undefined);
    assert.equal(job.metadata.annotations?.["openbao.org/snapshot-phase"], "pre-upgrade");
    assert.equal(job.metadata.annotations?.["openbao.org/upgrade-run-id"], "3.0.0-to-3.1.0");
  });
});
