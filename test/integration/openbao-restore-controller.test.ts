import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { crdFor } from "../../src/apis/index.js";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import {
  type OpenBaoRestore,
  OpenBaoRestoreKind,
  type OpenBaoRestoreStatus,
} from "../../src/apis/openbaorestore.js";
import { applyAny } from "../../src/runtime/apply.js";
import {
  EVENTS_V1 as EVENTS,
  JOB,
  POD,
  SECRET,
  SERVICE_ACCOUNT,
  STATEFULSET,
} from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isInvalid } from "../../src/runtime/errors.js";
import { EventRecorder } from "../../src/runtime/events.js";
import type { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { backupHolder, OperationLockStore } from "../../src/targets/openbao/opslifecycle/index.js";
import { executorRestoreJobs } from "../../src/targets/openbao/restore/defaults.js";
import type { RestoreJobs, SnapshotHead } from "../../src/targets/openbao/restore/ports.js";
import { PREPARE_ATTEMPTS, RestoreReconciler } from "../../src/targets/openbao/restore/reconciler.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { finishExecutorJob } from "../support/executor-job.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// The OpenBaoRestore controller's state machine on the real API server: validation, the lock, the
// one Job, its result, and lock cleanup. The shared control plane runs no Job controller and no
// node, so the test plays the executor by writing the Job's terminal status and the pod's
// termination message; every pass is a new reconciler with no memory (an operator restart). The
// real executor streaming a real snapshot is the end-to-end test on the local node.

const IMAGE = "localhost/platform-operator:dev";

/** Snapshot keys that exist in the "store", with their sizes. */
const objects = new Map<string, number>([["snaps/ns/bao/good.snap", 4096]]);
const probes: string[] = [];

describe("OpenBaoRestore controller on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  const clock = new Date("2026-12-01T10:00:00Z");

  const get = (name: string) => client.get<OpenBaoRestore>(OPENBAORESTORE, name, ns);
  /**
   * One pass by a fresh reconciler over the object as stored now; `afterStatusWrite` may throw to
   * stop the pass right after a status write (an operator that dies there).
   */
  const pass = async (
    name: string,
    afterStatusWrite?: (s: OpenBaoRestoreStatus) => void,
    over: { prepare?: RestoreJobs["prepare"]; failures?: number; now?: () => Date } = {},
  ) => {
    const cur = await get(name);
    const jobs = executorRestoreJobs(client, parseOpenBaoConfig({ executorImage: IMAGE }, "targets.openbao"));
    const r = new RestoreReconciler({
      client,
      events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
      log: silentLogger(),
      restores: { get: () => cur, addHandler: () => {} } as unknown as Informer<OpenBaoRestore>,
      probe: async (_t, key): Promise<SnapshotHead> => {
        probes.push(key);
        const size = objects.get(key);
        return size === undefined ? { exists: false } : { exists: true, size };
      },
      // The real builder and result reader: the Job is what the executor would get.
      jobs: over.prepare ? { ...jobs, prepare: over.prepare } : jobs,
      now: over.now ?? (() => clock),
      ...(afterStatusWrite ? { afterStatusWrite } : {}),
    });
    return r.reconcile(`${ns}/${name}`, { ...rc, failures: over.failures ?? 0 });
  };
  const cluster = (name: string) => client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);
  const cond = async (name: string, type: string) =>
    (await get(name)).status?.conditions?.find((c) => c.type === type);
  const restoreJobs = async () => (await client.list<KubeObject>(JOB, { namespace: ns })).items;

  const createRestore = (name: string, spec: Record<string, unknown>) =>
    applyAny(
      client,
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: OpenBaoRestoreKind,
        metadata: { name, namespace: ns },
        spec: {
          source: {
            key: "snaps/ns/bao/good.snap",
            target: {
              bucket: "snaps",
              endpoint: "http://s3.invalid:9000",
              credentialsSecretRef: { name: "s3-creds" },
            },
          },
          tokenSecretRef: { name: "restore-token" },
          ...spec,
        },
      },
      { fieldManager: "test-user", force: true },
    );

  /** The workload controller's view of a healthy, initialized cluster. */
  const healthy = (name: string) =>
    client.mergePatch(
      OPENBAOCLUSTER,
      name,
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
              lastTransitionTime: "2026-12-01T09:00:00Z",
            },
          ],
        },
      },
      "status",
    );

  /** Plays the executor: a pod with the termination message, and the Job's terminal conditions. */
  const finishJob = (name: string, result: Record<string, unknown>, ok: boolean) =>
    finishExecutorJob(client, { namespace: ns, name, result, ok, at: clock, image: IMAGE });

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
    ns = await freshNamespace(client, "ot-restore");
    // The test's stand-in pods need the namespace's default ServiceAccount, and no controller makes it here.
    await client.apply(
      SERVICE_ACCOUNT,
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: ns } },
      { fieldManager: "test-setup", force: true },
    );
  });
  after(async () => {
    // No controller runs here to drop the restore finalizer: the test does, so the namespace goes.
    for (const r of (await client.list<KubeObject>(OPENBAORESTORE, { namespace: ns })).items)
      await client
        .mergePatch(OPENBAORESTORE, r.metadata.name!, ns, { metadata: { finalizers: null } })
        .catch(() => {});
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  it("is immutable, and overrideOperationLock needs force (CEL on the CRD)", async () => {
    await createRestore("immutable", { cluster: "nope" });
    const change = await client
      .mergePatch(OPENBAORESTORE, "immutable", ns, { spec: { cluster: "other" } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(isInvalid(change), `expected 422, got ${String(change)}`);
    assert.match(String((change as Error).message), /immutable/);
    const noForce = await createRestore("noforce", { cluster: "bao", overrideOperationLock: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(isInvalid(noForce));
    assert.match(String((noForce as Error).message), /overrideOperationLock needs force/);
  });

  it("fails a restore into a cluster that does not exist, naming the field; no Job, no lock", async () => {
    await pass("immutable");
    const r = await get("immutable");
    assert.equal(r.status?.phase, "Failed");
    assert.equal((await cond("immutable", "RestoreComplete"))?.reason, "RestoreFailed");
    assert.equal((await cond("immutable", "Validated"))?.reason, "ClusterNotFound");
    assert.match(r.status?.message ?? "", /spec\.cluster: OpenBaoCluster .*\/nope does not exist/);
    assert.ok(r.status?.completionTime);
    assert.equal((await restoreJobs()).length, 0);
  });

  it("waits for initialization and for the credentials Secret with clear conditions, then runs once", async () => {
    await createOpenBaoCluster(client, ns, "bao", { replicas: 3 });
    await createRestore("r1", { cluster: "bao" });
    await pass("r1");
    assert.equal((await get("r1")).status?.phase, "Validating");
    assert.equal((await cond("r1", "Validated"))?.reason, "ClusterNotInitialized");
    // Upstream's RestoreConfigurationReady says what of the configuration is wrong meanwhile.
    const config = async () => {
      const c = await cond("r1", "RestoreConfigurationReady");
      return [c?.status, c?.reason, c?.message];
    };
    assert.deepEqual((await config()).slice(0, 2), ["False", "TokenSecretMissing"]);
    await healthy("bao");
    await pass("r1");
    const v = await cond("r1", "Validated");
    assert.equal(v?.reason, "CredentialsMissing");
    assert.match(v?.message ?? "", /token Secret restore-token \(tokenSecretRef\) does not exist/);
    for (const name of ["restore-token", "s3-creds"])
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ns },
        stringData: { token: "s3cr3t-value" },
      });
    // A static restore token without upstream's labels is not used: the restore waits, naming them.
    await pass("r1");
    const unlabelled = await cond("r1", "Validated");
    assert.equal(unlabelled?.reason, "CredentialsMissing");
    assert.match(
      unlabelled?.message ?? "",
      /token Secret restore-token \(tokenSecretRef\) lacks the labels a restore token carries: openbao\.org\/cluster=bao, openbao\.org\/credential-purpose=restore-token/,
    );
    assert.deepEqual((await config()).slice(0, 2), ["False", "TokenSecretInvalid"]);
    await client.mergePatch(SECRET, "restore-token", ns, {
      metadata: {
        labels: { "openbao.org/cluster": "bao", "openbao.org/credential-purpose": "restore-token" },
      },
    });
    assert.deepEqual(probes, []);
    await pass("r1");
    const r = await get("r1");
    assert.equal(r.status?.phase, "Running");
    assert.equal(r.status?.jobName, "restore-r1");
    const [status, reason, message] = await config();
    assert.deepEqual([status, reason], ["True", "Ready"]);
    assert.match(
      message ?? "",
      /token in Secret .*\/restore-token; the store credentials are in Secret s3-creds/,
    );
    assert.equal(r.status?.snapshotSize, 4096);
    assert.equal(r.status?.snapshotKey, "snaps/ns/bao/good.snap");
    assert.equal((await cluster("bao")).status?.operationLock?.holder, `restore/${ns}/r1`);
    assert.equal((await cluster("bao")).status?.operationLock?.operation, "Restore");
    // Restarts while running: still one Job, the lock still the restore's.
    await pass("r1");
    await pass("r1");
    assert.deepEqual(
      (await restoreJobs()).map((j) => j.metadata.name),
      ["restore-r1"],
    );
    assert.equal((await get("r1")).status?.phase, "Running");
    assert.ok(!JSON.stringify((await get("r1")).status).includes("s3cr3t-value"));

    await finishJob(
      "restore-r1",
      { ok: true, operation: "restore", key: "snaps/ns/bao/good.snap", size: 4096, durationMs: 1500 },
      true,
    );
    await pass("r1");
    const done = await get("r1");
    assert.equal(done.status?.phase, "Completed");
    assert.equal((await cond("r1", "RestoreComplete"))?.reason, "RestoreSucceeded");
    assert.deepEqual((await config()).slice(0, 2), ["True", "Ready"], "kept as last evaluated");
    assert.match(done.status?.message ?? "", /follow-up: .*unsealed/);
    assert.ok(done.status?.completionTime);
    assert.equal((await cluster("bao")).status?.operationLock, undefined, "the lock outlived the restore");
    await pass("r1");
    assert.equal((await restoreJobs()).length, 1);
  });

  it("fails a missing snapshot before taking the lock", async () => {
    await createRestore("r-missing", {
      cluster: "bao",
      source: {
        key: "snaps/ns/bao/gone.snap",
        target: { bucket: "snaps", credentialsSecretRef: { name: "s3-creds" } },
      },
    });
    await pass("r-missing");
    await pass("r-missing");
    const r = await get("r-missing");
    assert.equal(r.status?.phase, "Failed");
    assert.equal((await cond("r-missing", "Validated"))?.reason, "SnapshotNotFound");
    assert.match(r.status?.message ?? "", /no snapshot at s3 bucket snaps, key snaps\/ns\/bao\/gone\.snap/);
    assert.equal((await cluster("bao")).status?.operationLock, undefined);
  });

  it("waits while a backup holds the lock, runs after its release; a failed Job fails and releases", async () => {
    const store = new OperationLockStore(client);
    const bk = { operation: "Backup" as const, holder: backupHolder("bao", "w-1") };
    assert.equal((await store.acquire({ name: "bao", namespace: ns }, bk)).acquired, true);
    await createRestore("r2", { cluster: "bao" });
    await pass("r2");
    await pass("r2");
    const lockCond = await cond("r2", "LockAcquired");
    assert.equal((await get("r2")).status?.phase, "Validating");
    assert.equal(lockCond?.reason, "OperationLockHeld");
    assert.match(lockCond?.message ?? "", /held by Backup \(holder backup\/bao\/w-1\)/);
    assert.match(lockCond?.message ?? "", /overrideOperationLock: true and force: true/);
    assert.equal((await cluster("bao")).status?.operationLock?.holder, bk.holder);
    assert.equal((await restoreJobs()).filter((j) => j.metadata.name === "restore-r2").length, 0);

    await store.release({ name: "bao", namespace: ns }, bk);
    await pass("r2");
    assert.equal((await get("r2")).status?.phase, "Running");
    await finishJob(
      "restore-r2",
      {
        ok: false,
        operation: "restore",
        key: "snaps/ns/bao/good.snap",
        error: "snapshot restore refused by OpenBao",
        reason: "RestoreFailed",
      },
      false,
    );
    await pass("r2");
    const r = await get("r2");
    assert.equal(r.status?.phase, "Failed");
    assert.match(
      (await cond("r2", "RestoreComplete"))?.message ?? "",
      /RestoreFailed: snapshot restore refused/,
    );
    assert.match(r.status?.message ?? "", /follow-up/);
    assert.equal((await cluster("bao")).status?.operationLock, undefined);
  });

  it("with overrideOperationLock and force takes the lock from a backup and says so", async () => {
    const store = new OperationLockStore(client);
    const bk = { operation: "Backup" as const, holder: backupHolder("bao", "w-2") };
    assert.equal((await store.acquire({ name: "bao", namespace: ns }, bk)).acquired, true);
    await createRestore("r3", { cluster: "bao", overrideOperationLock: true, force: true });
    await pass("r3");
    const r = await get("r3");
    assert.equal(r.status?.phase, "Running");
    const o = await cond("r3", "OperationLockOverride");
    assert.equal(o?.status, "True");
    assert.equal(o?.reason, "OperationLockOverridden");
    assert.match(o?.message ?? "", /taken from Backup backup\/bao\/w-2 by Restore restore\/.*\/r3/);
    const lock = (await cluster("bao")).status?.operationLock;
    assert.equal(lock?.holder, `restore/${ns}/r3`);
    // The backup cannot release what it lost, nor take it back.
    assert.equal((await store.release({ name: "bao", namespace: ns }, bk)).released, false);
    assert.equal((await store.acquire({ name: "bao", namespace: ns }, bk)).acquired, false);
    const overrideEvent = await eventually(
      async () => {
        const list = await client.list<KubeObject>(EVENTS, { namespace: ns });
        return list.items.find(
          (e) =>
            e["reason"] === "OperationLockOverridden" && (e["regarding"] as { name?: string })?.name === "r3",
        );
      },
      10_000,
      "the OperationLockOverridden event on r3",
    );
    assert.match(String(overrideEvent["note"]), /taken from Backup backup\/bao\/w-2/);
    await finishJob(
      "restore-r3",
      { ok: true, operation: "restore", key: "snaps/ns/bao/good.snap", size: 4096, durationMs: 10 },
      true,
    );
    await pass("r3");
    assert.equal((await get("r3")).status?.phase, "Completed");
    assert.equal((await cluster("bao")).status?.operationLock, undefined);
  });

  it("once the snapshot is applied, restarts the voters, records status.restore, then the read replicas, then completes", async () => {
    // Stand-in pods (never scheduled here) and StatefulSets (no controller runs here: the test plays
    // the StatefulSet controller, making each deleted pod again and marking it Ready). The pods and
    // the API server's clock decide, so these passes run on the real clock.
    const now = { now: () => new Date() };
    await createOpenBaoCluster(client, ns, "rr", { replicas: 1, readReplicas: { replicas: 1 } });
    await healthy("rr");
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "rr-restore-token",
        namespace: ns,
        labels: { "openbao.org/cluster": "rr", "openbao.org/credential-purpose": "restore-token" },
      },
      stringData: { token: "s3cr3t-value" },
    });
    const labels = (c: string, component: string) => ({
      "openbao.org/cluster": c,
      "openbao.org/component": component,
    });
    const standIn = async (name: string, l: Record<string, string>, ready: boolean) => {
      await client.create(POD, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: ns, labels: l },
        spec: { containers: [{ name: "c", image: IMAGE }] },
      });
      if (ready)
        await client.mergePatch(
          POD,
          name,
          ns,
          { status: { conditions: [{ type: "Ready", status: "True" }] } },
          "status",
        );
    };
    for (const [name, component] of [
      ["rr", "server"],
      ["rr-read", "read-replica"],
    ] as const)
      await client.create(STATEFULSET, {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name, namespace: ns, labels: labels("rr", component) },
        spec: {
          replicas: 1,
          serviceName: "rr-internal",
          selector: { matchLabels: labels("rr", component) },
          template: {
            metadata: { labels: labels("rr", component) },
            spec: { containers: [{ name: "c", image: IMAGE }] },
          },
        },
      });
    await standIn("rr-0", labels("rr", "server"), true);
    await standIn("rr-read-0", labels("rr", "read-replica"), true);
    await standIn("other-0", labels("other", "server"), true);
    await standIn("rr-backup-x", labels("rr", "backup"), true);
    const podNames = async () =>
      (await client.list<KubeObject>(POD, { namespace: ns })).items.map((p) => p.metadata.name!);
    const uidOf = async (name: string) => (await client.get<KubeObject>(POD, name, ns)).metadata.uid;
    const record = async () => (await cluster("rr")).status?.restore;
    const phase = async () => (await get("r-restart")).status?.phase;
    await createRestore("r-restart", { cluster: "rr", tokenSecretRef: { name: "rr-restore-token" } });
    await pass("r-restart", undefined, now);
    assert.equal(await phase(), "Running");
    const readUid = await uidOf("rr-read-0");
    const jobEnd = new Date();
    await finishExecutorJob(client, {
      namespace: ns,
      name: "restore-r-restart",
      result: { ok: true, operation: "restore", key: "snaps/ns/bao/good.snap", size: 4096, durationMs: 10 },
      ok: true,
      // The Job ended after the pods were created: they hold the state from before the snapshot.
      at: jobEnd,
      image: IMAGE,
    });
    const self = await get("r-restart");
    /** Creation timestamps have whole seconds: a pod made "after" `d` must be made in a later second. */
    const pastTheSecondOf = async (d: Date) => {
      const due = Math.floor(d.getTime() / 1000) * 1000 + 1050;
      while (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
    };
    // The operator stops right after its first status write of the restart: the pods are already
    // deleted, and the next operator goes on from what it sees.
    let stopped = false;
    await pass(
      "r-restart",
      (st) => {
        if (!stopped && st.conditions?.some((c) => /restarted rr-0/.test(c.message))) {
          stopped = true;
          throw new Error("operator stopped after the voters' restart");
        }
      },
      now,
    ).catch((e: Error) => assert.match(e.message, /operator stopped/));
    assert.ok(stopped, "the pass restarted the voters");
    assert.deepEqual(
      await record(),
      { name: "r-restart", uid: self.metadata.uid },
      "requested, not complete",
    );
    let left = await podNames();
    assert.ok(!left.includes("rr-0"), left.join(", "));
    assert.ok(left.includes("rr-read-0") && left.includes("other-0") && left.includes("rr-backup-x"));
    // The voter is made again but not Ready yet: still the voters' turn; the read replica is untouched.
    await pastTheSecondOf(jobEnd);
    await standIn("rr-0", labels("rr", "server"), false);
    await pass("r-restart", undefined, now);
    assert.equal(await phase(), "Running");
    assert.match(
      (await cond("r-restart", "RestoreComplete"))?.message ?? "",
      /0\/1 voter pods back and Ready/,
    );
    assert.equal((await record())?.restartCompletedAt, undefined);
    assert.equal(await uidOf("rr-read-0"), readUid);
    await client.mergePatch(
      POD,
      "rr-0",
      ns,
      { status: { conditions: [{ type: "Ready", status: "True" }] } },
      "status",
    );
    // Voter back and Ready: restartCompletedAt recorded, and then the read replica restarted.
    await pass("r-restart", undefined, now);
    const rec = await record();
    assert.ok(rec?.restartCompletedAt, JSON.stringify(rec));
    assert.equal(rec?.name, "r-restart");
    left = await podNames();
    assert.ok(!left.includes("rr-read-0"), left.join(", "));
    assert.equal(await phase(), "Running", "not complete while the read replicas restart");
    assert.equal((await cluster("rr")).status?.operationLock?.holder, `restore/${ns}/r-restart`);
    await pastTheSecondOf(new Date(rec.restartCompletedAt));
    await standIn("rr-read-0", labels("rr", "read-replica"), true);
    await pass("r-restart", undefined, now);
    assert.equal(await phase(), "Completed");
    assert.equal((await get("r-restart")).status?.execution?.stage, "FollowThroughComplete");
    assert.equal((await cluster("rr")).status?.operationLock, undefined);
    assert.deepEqual(await record(), rec, "status.restore stays as the record of the last restore");
    for (const [reason, note] of [
      ["PodsRestarted", /restarted rr-0 so that every node loads the restored data/],
      ["RestoreRestartCompleted", /every voter is back and Ready/],
      ["ReadReplicasRestarted", /restarted the read replicas rr-read-0/],
    ] as const) {
      const e = await eventually(
        async () =>
          (await client.list<KubeObject>(EVENTS, { namespace: ns })).items.find(
            (x) => x["reason"] === reason && (x["regarding"] as { name?: string })?.name === "r-restart",
          ),
        10_000,
        `the ${reason} event on r-restart`,
      );
      assert.match(String(e["note"]), note);
    }
  });

  it("a snapshot sealed by another key fails as SealMismatch, naming the Secret to fill, nothing changed", async () => {
    await createRestore("r-seal", { cluster: "bao" });
    await pass("r-seal");
    await finishJob(
      "restore-r-seal",
      {
        ok: false,
        operation: "restore",
        key: "snaps/ns/bao/good.snap",
        reason: "SealMismatch",
        error:
          "snapshot: HTTP 400: could not verify hash file, possibly the snapshot is using a different autoseal key; use the snapshot-force API to bypass this check",
      },
      false,
    );
    await pass("r-seal");
    const r = await get("r-seal");
    assert.equal(r.status?.phase, "Failed");
    assert.match((await cond("r-seal", "RestoreComplete"))?.message ?? "", /^SealMismatch: /);
    assert.match(
      r.status?.message ?? "",
      /into Secret bao-unseal-key, then create a new OpenBaoRestore with spec\.force: true/,
    );
    assert.match(r.status?.message ?? "", /the cluster was not changed$/);
    assert.equal((await cluster("bao")).status?.operationLock, undefined);
  });

  it("a terminal restore that still holds the lock (operator died before releasing) releases it", async () => {
    const store = new OperationLockStore(client);
    const id = { operation: "Restore" as const, holder: `restore/${ns}/r1` };
    assert.equal((await store.acquire({ name: "bao", namespace: ns }, id)).acquired, true);
    assert.equal((await get("r1")).status?.phase, "Completed");
    await pass("r1");
    assert.equal((await cluster("bao")).status?.operationLock, undefined);
  });

  it("stopped right after each receipt stage, a restore never creates a second Job", async () => {
    await createOpenBaoCluster(client, ns, "rcpt", { replicas: 1 });
    await healthy("rcpt");
    // rcpt's own restore token: a token Secret is labelled for one cluster.
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "rcpt-restore-token",
        namespace: ns,
        labels: { "openbao.org/cluster": "rcpt", "openbao.org/credential-purpose": "restore-token" },
      },
      stringData: { token: "s3cr3t-value" },
    });
    const stages = ["Prepared", "Committed", "Created", "TerminalObserved", "FollowThroughComplete"] as const;
    for (const stage of stages) {
      const name = `rc-${stage.toLowerCase()}`;
      const jobName = `restore-${name}`;
      await createRestore(name, { cluster: "rcpt", tokenSecretRef: { name: "rcpt-restore-token" } });
      const uids = new Set<string>();
      const seen = async () => {
        const jobs = (await restoreJobs()).filter((j) => j.metadata.name === jobName);
        assert.ok(jobs.length <= 1, `${stage}: ${jobs.length} Jobs`);
        for (const j of jobs) uids.add(j.metadata.uid!);
        return jobs[0];
      };
      // The operator dies right after recording `stage`, once; every later pass is a fresh one.
      let stopped = false;
      const stopAt = (s: OpenBaoRestoreStatus) => {
        if (!stopped && s.execution?.stage === stage) {
          stopped = true;
          throw new Error(`operator stopped after ${stage}`);
        }
      };
      for (
        let i = 0;
        i < 12 && !["Completed", "Failed", "Unknown"].includes((await get(name)).status?.phase ?? "");
        i++
      ) {
        await pass(name, stopAt).catch((e: Error) => assert.match(e.message, /operator stopped after/));
        const job = await seen();
        // Plays the executor once the Job runs (created and resumed) and has no result yet.
        const j = job as
          | { spec?: { suspend?: boolean }; status?: { conditions?: { type: string }[] } }
          | undefined;
        if (
          j &&
          j.spec?.suspend !== true &&
          !j.status?.conditions?.some((c) => c.type === "Complete" || c.type === "Failed")
        )
          await finishJob(
            jobName,
            { ok: true, operation: "restore", key: "snaps/ns/bao/good.snap", size: 4096, durationMs: 900 },
            true,
          );
      }
      assert.ok(stopped, `the pass stopped after ${stage}`);
      const r = await get(name);
      assert.ok(uids.size <= 1, `${stage}: Jobs ${[...uids].join(", ")}`);
      // Stopped after Committed too: the Job was made suspended before it and is resumed after,
      // so the restore completes with its one Job (it used to end Unknown, restoring nothing).
      assert.equal(uids.size, 1, `${stage}: exactly one Job`);
      assert.equal(r.status?.phase, "Completed", `${stage}: ${r.status?.message}`);
      assert.equal(r.status?.execution?.stage, "FollowThroughComplete");
      assert.equal(r.status?.execution?.jobUID, [...uids][0]);
      assert.equal(r.status?.execution?.terminalResult, "Succeeded");
      assert.equal(r.status?.execution?.operationID, `restore-${r.metadata.uid}`);
      for (const at of [
        "preparedAt",
        "committedAt",
        "createdAt",
        "terminalObservedAt",
        "followThroughCompletedAt",
      ])
        assert.ok(((r.status?.execution ?? {}) as Record<string, unknown>)[at], `${stage}: execution.${at}`);
      // Terminal: further passes change nothing and create nothing; the lock is free.
      await pass(name);
      await seen();
      assert.ok(uids.size <= 1);
      assert.equal((await cluster("rcpt")).status?.operationLock, undefined);
    }
  });

  it("a committed Job that disappears is reported as Unknown, not created again", async () => {
    await createRestore("rc-gone", { cluster: "rcpt", tokenSecretRef: { name: "rcpt-restore-token" } });
    await pass("rc-gone");
    const running = await get("rc-gone");
    assert.equal(running.status?.phase, "Running");
    assert.equal(running.status?.execution?.stage, "Created");
    const job = (await restoreJobs()).find((j) => j.metadata.name === "restore-rc-gone")!;
    assert.equal(running.status?.execution?.jobUID, job.metadata.uid);
    await client.delete(JOB, "restore-rc-gone", ns, { propagationPolicy: "Background" });
    await eventually(
      async () =>
        (await restoreJobs()).some((j) => j.metadata.name === "restore-rc-gone") ? undefined : true,
      30_000,
      "the Job deleted",
    );
    await pass("rc-gone");
    await pass("rc-gone");
    const r = await get("rc-gone");
    assert.equal(r.status?.phase as string, "Unknown");
    assert.equal(r.status?.execution?.stage, "Unknown");
    assert.match(r.status?.message ?? "", /is not created again/);
    assert.equal((await restoreJobs()).filter((j) => j.metadata.name === "restore-rc-gone").length, 0);
    assert.equal((await cluster("rcpt")).status?.operationLock, undefined);
  });

  it("a Job whose ServiceAccount cannot be made is retried with the failure backoff, then the restore gives up and frees the lock", async () => {
    await createRestore("rc-prep", { cluster: "rcpt", tokenSecretRef: { name: "rcpt-restore-token" } });
    const refused = async () => {
      throw new Error("serviceaccounts is forbidden");
    };
    const first = await pass("rc-prep", undefined, { prepare: refused, failures: 0 });
    assert.deepEqual(first, { retryReason: "JobPrepareFailed" }, "the runtime's failure backoff, counted");
    let r = await get("rc-prep");
    assert.equal(r.status?.phase, "Validating");
    assert.equal((await cond("rc-prep", "Validated"))?.reason, "JobPrepareFailed");
    assert.match(r.status?.message ?? "", new RegExp(`forbidden \\(attempt 1 of ${PREPARE_ATTEMPTS}\\)`));
    assert.equal((await cluster("rcpt")).status?.operationLock?.holder, `restore/${ns}/rc-prep`);
    // The last attempt the runtime counted: the restore fails, nothing changed, no Job, no lock.
    await pass("rc-prep", undefined, { prepare: refused, failures: PREPARE_ATTEMPTS - 1 });
    r = await get("rc-prep");
    assert.equal(r.status?.phase, "Failed");
    assert.equal((await cond("rc-prep", "Validated"))?.reason, "JobPrepareFailed");
    assert.equal((await cond("rc-prep", "RestoreComplete"))?.reason, "RestoreFailed");
    assert.match(
      r.status?.message ?? "",
      new RegExp(`gave up after ${PREPARE_ATTEMPTS} attempts.*not changed`),
    );
    assert.equal((await restoreJobs()).filter((j) => j.metadata.name === "restore-rc-prep").length, 0);
    assert.equal((await cluster("rcpt")).status?.operationLock, undefined);
  });
});
