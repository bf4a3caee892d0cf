import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { POD, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { RuntimeRestart, restartLock } from "../../src/targets/openbao/adminops/restart/manager.js";
import type { BaoClient, BaoEndpoint } from "../../src/targets/openbao/baoclient/client.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { podSelector } from "../../src/targets/openbao/identity.js";
import { OperationLockStore } from "../../src/targets/openbao/opslifecycle/index.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// spec.runtime.restartAt on the real API server, without a node: the voter pods are stand-ins (never
// scheduled, so a deletion removes them at once) that the test re-creates and marks Ready the way
// the StatefulSet controller and the kubelet would; OpenBao is a fake that answers health, Raft
// and step-down per pod. Every pass is a new RuntimeRestart: only status carries the restart from
// one pass to the next, as it would across operator restarts.

const EVENT = { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true };
const REPLICAS = 3;

describe("openbao spec.runtime.restartAt: a rolling restart, the leader last, under the operation lock", () => {
  let client: KubeClient;
  let ns: string;
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  /** What happened, in order: `delete:<pod>` and `step-down:<leader>`. */
  const log: string[] = [];
  let leader = "";
  const notReady = new Set<string>();
  let refuseStepDown = false;

  // One fake OpenBao for every pod: the leader moves to the lowest other pod on a step-down.
  const fakeBao = (name: string) => (ep: BaoEndpoint) => {
    const pod = new URL(ep.address).hostname.split(".")[0]!;
    return {
      health: async () => ({ initialized: true, sealed: false, standby: pod !== leader, version: "2.7.2" }),
      raftServers: async () =>
        Array.from({ length: REPLICAS }, (_, i) => ({
          node_id: `${name}-${i}`,
          address: `${name}-${i}:8201`,
          leader: `${name}-${i}` === leader,
          voter: true,
        })),
      autopilotState: async () => ({ healthy: true }),
      stepDown: async () => {
        if (refuseStepDown) throw new Error("step-down refused by the fake");
        log.push(`step-down:${leader}`);
        leader = Array.from({ length: REPLICAS }, (_, i) => `${name}-${i}`).find((p) => p !== leader)!;
      },
    } as unknown as BaoClient;
  };

  const get = (name: string) => client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);
  const restarting = async (name: string) =>
    (await get(name)).status?.conditions?.find((c) => c.type === "Restarting");
  const pods = async (name: string) =>
    new Map(
      (await client.list<KubeObject>(POD, { namespace: ns })).items
        .filter((p) => p.metadata.name?.startsWith(`${name}-`))
        .map((p) => [p.metadata.name!, p]),
    );
  const events = async (reason: string) =>
    (await client.list<KubeObject>(EVENT, { namespace: ns })).items.filter((e) => e["reason"] === reason);

  /** A voter pod as the StatefulSet controller would create it, Ready unless held back. */
  const createPod = async (name: string, pod: string) => {
    await client.create(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: pod, namespace: ns, labels: podSelector({ name, namespace: ns }) },
      spec: { containers: [{ name: "openbao", image: "openbao/openbao:2.7.2" }] },
    });
    if (notReady.has(pod)) return;
    await client.mergePatch(
      POD,
      pod,
      ns,
      {
        status: {
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date().toISOString() }],
        },
      },
      "status",
    );
  };

  /** One operator pass (a fresh manager), then the StatefulSet controller's part: re-create what is gone. */
  const pass = async (name: string) => {
    const cluster = await get(name);
    const manager = new RuntimeRestart({
      client,
      events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
      clusters: { get: () => cluster },
      access: { clusterDomain: "cluster.local", baoClient: fakeBao(name) },
      options: { stepDownSettleMs: 0, waitPollMs: 10 },
    });
    const result = await manager.reconcile(`${ns}/${name}`, rc);
    const live = await pods(name);
    for (let i = 0; i < REPLICAS; i++) {
      const pod = `${name}-${i}`;
      if (live.has(pod)) continue;
      log.push(`delete:${pod}`);
      await createPod(name, pod);
    }
    return result;
  };

  const cluster = async (name: string) => {
    await createOpenBaoCluster(client, ns, name, { replicas: REPLICAS, tls: { enabled: false } });
    await client.mergePatch(
      OPENBAOCLUSTER,
      name,
      ns,
      { status: { initialized: true, currentVersion: "2.7.2" } },
      "status",
    );
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${name}-root-token`, namespace: ns },
      stringData: { token: "root-token-for-the-fake" },
    });
    for (let i = 0; i < REPLICAS; i++) await createPod(name, `${name}-${i}`);
    leader = `${name}-1`;
  };
  const request = (name: string, restartAt: string) =>
    client.mergePatch(OPENBAOCLUSTER, name, ns, { spec: { runtime: { restartAt } } });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obrst");
    // No controller-manager makes the namespace's default ServiceAccount here; pods need it.
    await client.create(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    });
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("restarts the standbys one at a time from the highest ordinal, then steps the leader down and restarts it", async () => {
    await cluster("rs");
    const before = await pods("rs");
    await request("rs", new Date().toISOString());
    log.length = 0;

    // The first pass records what to restart and takes the lock; nothing is deleted yet.
    await pass("rs");
    let c = await get("rs");
    assert.deepEqual(log, []);
    assert.equal(c.status?.operationLock?.operation, "Restart");
    assert.deepEqual(
      c.status?.runtimeRestart?.pendingPods?.map((p) => p.name),
      ["rs-0", "rs-1", "rs-2"],
    );
    assert.equal((await restarting("rs"))?.reason, "RestartInProgress");

    // The first replacement does not come back Ready: nothing else is touched while it is not.
    notReady.add("rs-2");
    await pass("rs");
    assert.deepEqual(log, ["delete:rs-2"]);
    for (let i = 0; i < 3; i++) await pass("rs");
    assert.deepEqual(log, ["delete:rs-2"], "no second pod while rs-2 is not Ready");
    assert.match((await restarting("rs"))!.message, /pod rs-2 is not Ready yet/);
    notReady.delete("rs-2");
    await client.mergePatch(
      POD,
      "rs-2",
      ns,
      {
        status: {
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date().toISOString() }],
        },
      },
      "status",
    );

    for (let i = 0; i < 20 && (await restarting("rs"))?.reason !== "RestartComplete"; i++) await pass("rs");
    assert.deepEqual(log, ["delete:rs-2", "delete:rs-0", "step-down:rs-1", "delete:rs-1"]);
    c = await get("rs");
    const r = c.status!.runtimeRestart!;
    assert.ok(r.completedAt, "completedAt recorded");
    assert.deepEqual(r.pendingPods, []);
    assert.deepEqual(r.restartedPods, ["rs-2", "rs-0", "rs-1"]);
    assert.equal(c.status?.operationLock, undefined, "the lock is given back");
    const cond = await restarting("rs");
    assert.equal(cond?.status, "False");
    assert.equal(cond?.reason, "RestartComplete");
    // Every pod is another pod than before.
    const now = await pods("rs");
    for (const [name, p] of before) assert.notEqual(now.get(name)?.metadata.uid, p.metadata.uid, name);
    await eventually(
      async () => ((await events("RestartPodDeleted")).length === 3 ? true : undefined),
      10_000,
      "3 events",
    );

    // Done is done: more passes (new processes) restart nothing more.
    for (let i = 0; i < 3; i++) await pass("rs");
    assert.equal(log.length, 4);
    assert.equal((await get("rs")).status?.operationLock, undefined);
  });

  it("a new value restarts again; a timestamp older than every pod restarts nothing", async () => {
    log.length = 0;
    // Older than every pod of rs: nothing to do, and it completes at once.
    await request("rs", "2020-01-01T00:00:00Z");
    for (let i = 0; i < 5 && (await restarting("rs"))?.message !== "no pod needed a restart"; i++)
      await pass("rs");
    assert.deepEqual(log, []);
    assert.equal((await restarting("rs"))?.reason, "RestartComplete");
    assert.equal((await get("rs")).status?.runtimeRestart?.restartAt, "2020-01-01T00:00:00Z");

    await request("rs", "again");
    for (let i = 0; i < 20; i++) {
      await pass("rs");
      if ((await get("rs")).status?.runtimeRestart?.completedAt && log.length) break;
    }
    const seen: string[] = [...log];
    assert.equal(seen.filter((l) => l.startsWith("delete:")).length, 3);
    assert.ok(seen.at(-1)?.startsWith("delete:"));
    assert.ok(seen.at(-2)?.startsWith("step-down:"), "the leader goes last, after a step-down");
  });

  it("a step-down that keeps failing is never given up: RestartStalled with the count from the third failure, the lock kept; once it answers the restart completes", async () => {
    await cluster("sd");
    await request("sd", "now");
    log.length = 0;
    refuseStepDown = true;
    const results: unknown[] = [];
    for (let i = 0; i < 20 && (await restarting("sd"))?.reason !== "RestartStalled"; i++)
      results.push(await pass("sd"));
    const failed = results.filter((r) => (r as { retryReason?: string })?.retryReason === "StepDownFailed");
    assert.equal(failed.length, 3, "three failed passes, each a retry with the runtime's failure backoff");
    let c = await get("sd");
    assert.equal(c.status?.runtimeRestart?.consecutiveFailures, 3);
    assert.equal(c.status?.runtimeRestart?.lastErrorReason, "StepDownFailed");
    const stalled = await restarting("sd");
    assert.equal(stalled?.status, "True");
    assert.match(
      stalled!.message,
      /3 failed attempts in a row, the last StepDownFailed: .*step-down refused/,
    );
    assert.equal(c.status?.operationLock?.holder, restartLock("sd", "now").holder, "the lock is kept");
    await eventually(
      async () => ((await events("RestartStalled")).some((e) => e["type"] === "Warning") ? true : undefined),
      10_000,
      "a RestartStalled warning",
    );

    // Still retried: a fourth failure counts on; then the step-down answers and the restart ends.
    const r = await pass("sd");
    assert.deepEqual(r, { retryReason: "StepDownFailed" });
    assert.equal((await get("sd")).status?.runtimeRestart?.consecutiveFailures, 4);
    assert.match((await restarting("sd"))!.message, /^restart stalled: 4 failed attempts/);
    refuseStepDown = false;
    for (let i = 0; i < 20 && (await restarting("sd"))?.reason !== "RestartComplete"; i++) await pass("sd");
    c = await get("sd");
    assert.equal((await restarting("sd"))?.reason, "RestartComplete");
    assert.equal(c.status?.runtimeRestart?.consecutiveFailures, undefined);
    assert.equal(c.status?.operationLock, undefined);
  });

  it("waits without touching a pod while another operation holds the lock", async () => {
    await cluster("held");
    const locks = new OperationLockStore(client);
    const backup = { operation: "Backup" as const, holder: "backup/held/run-1" };
    await locks.acquire({ name: "held", namespace: ns }, backup);
    await request("held", "now");
    log.length = 0;
    const r = await pass("held");
    assert.ok(r && "requeueAfterMs" in r && r.requeueAfterMs > 0);
    assert.deepEqual(log, []);
    const c = await get("held");
    assert.equal(c.status?.runtimeRestart, undefined);
    assert.equal(c.status?.operationLock?.holder, backup.holder);
    const cond = await restarting("held");
    assert.equal(cond?.reason, "OperationLockHeld");
    assert.match(cond!.message, /held by Backup \(holder backup\/held\/run-1\)/);

    // Released: the restart takes the lock under its own identity and begins.
    await locks.release({ name: "held", namespace: ns }, backup);
    await pass("held");
    assert.equal((await get("held")).status?.operationLock?.holder, restartLock("held", "now").holder);
  });
});
