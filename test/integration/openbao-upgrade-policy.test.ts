import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import { upgradeLock } from "../../src/targets/openbao/adminops/upgrade/core/lock.js";
import { UpgradeManager } from "../../src/targets/openbao/adminops/upgrade/core/manager.js";
import type { RollingOptions } from "../../src/targets/openbao/adminops/upgrade/rolling/manager.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { OperationLockStore, writeAdminOpsConcern } from "../../src/targets/openbao/opslifecycle/index.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// The upgrade manager's refusals and its request bookkeeping against the real API server, without a
// node: the running version is what the workload controller would have written into status, there
// are no pods, and each pass is a fresh manager (what a restarted operator would run). The rolling
// steps themselves run on the node in openbao-upgrade-rolling.test.ts.

const EVENT = { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true };

/** A new upgrade manager, as a restarted operator would run (nothing carried over but status). */
const freshManager = (client: KubeClient, rolling?: RollingOptions) =>
  new UpgradeManager({
    client,
    events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
    clusters: { get: () => ({ metadata: {} }) as OpenBaoCluster },
    access: { clusterDomain: "cluster.local" },
    ...(rolling ? { rolling } : {}),
  });

describe("openbao upgrade policy and requests on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  const manager = () => freshManager(client);
  const get = (name: string) => client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);
  const upgrading = async (name: string) =>
    (await get(name)).status?.conditions?.find((c) => c.type === "Upgrading");
  const setStatus = (name: string, status: Record<string, unknown>) =>
    client.mergePatch(OPENBAOCLUSTER, name, ns, { status }, "status");
  const events = async (reason: string) =>
    (
      await client.list<{ reason?: string; metadata: { name?: string } }>(EVENT, { namespace: ns })
    ).items.filter((e) => e.reason === reason);

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obupg");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("a downgrade is DowngradeBlocked: condition, one Warning event, no lock, no status.upgrade", async () => {
    await createOpenBaoCluster(client, ns, "down", { version: "2.6.2", replicas: 3 });
    await setStatus("down", { initialized: true, currentVersion: "2.7.2" });
    for (let i = 0; i < 2; i++) assert.equal(await manager().reconcile(`${ns}/down`, rc), undefined);
    const c = await upgrading("down");
    assert.equal(c?.status, "False");
    assert.equal(c?.reason, "DowngradeBlocked");
    assert.match(c!.message, /spec\.version 2\.6\.2 is older than the running 2\.7\.2/);
    const s = (await get("down")).status!;
    assert.equal(s.upgrade, undefined);
    assert.equal(s.operationLock, undefined);
    // One event for the refusal, not one per pass.
    await eventually(
      async () => ((await events("DowngradeBlocked")).length >= 1 ? true : undefined),
      10_000,
      "the event",
    );
    assert.equal((await events("DowngradeBlocked")).length, 1);
  });

  it("an image tag that disagrees with spec.version is refused with the validation's reason", async () => {
    await createOpenBaoCluster(client, ns, "img", { version: "2.7.2", image: "openbao/openbao:2.6.2" });
    await setStatus("img", { initialized: true, currentVersion: "2.6.2" });
    await manager().reconcile(`${ns}/img`, rc);
    const c = await upgrading("img");
    assert.equal(c?.reason, "InvalidSpec");
    assert.match(c!.message, /^spec\.image: tag 2\.6\.2 is another version than spec\.version 2\.7\.2/);
    assert.equal((await get("img")).status?.operationLock, undefined);
  });

  it("an upgrade on a cluster whose voters are not Ready waits without taking the lock", async () => {
    await createOpenBaoCluster(client, ns, "wait", { version: "2.7.2", replicas: 3 });
    await setStatus("wait", { initialized: true, currentVersion: "2.6.2" });
    const r = await manager().reconcile(`${ns}/wait`, rc);
    assert.ok(r && "requeueAfterMs" in r && r.requeueAfterMs > 0, "looks again later");
    const c = await upgrading("wait");
    assert.equal(c?.status, "False");
    assert.equal(c?.reason, "PodNotReady");
    assert.match(c!.message, /upgrade to 2\.7\.2 waits: voter pod\(s\) 0, 1, 2 of 3 are not Ready/);
    const s = (await get("wait")).status!;
    assert.equal(s.operationLock, undefined);
    assert.equal(s.upgrade, undefined);
  });

  it("spec.paused: UpgradePaused, nothing started", async () => {
    await createOpenBaoCluster(client, ns, "paused", { version: "2.7.2", paused: true });
    await setStatus("paused", { initialized: true, currentVersion: "2.6.2" });
    await manager().reconcile(`${ns}/paused`, rc);
    assert.equal((await upgrading("paused"))?.reason, "UpgradePaused");
    assert.equal((await get("paused")).status?.upgrade, undefined);
  });

  it("a failed rolling upgrade holds (and keeps its lock) until a new retry value, which acts once", async () => {
    await createOpenBaoCluster(client, ns, "failed", { version: "2.7.2", replicas: 3 });
    const failure = { reason: "StepDownFailed", message: "step-down refused", at: "2026-12-01T10:00:00Z" };
    await setStatus("failed", { initialized: true, currentVersion: "2.6.2" });
    // As the upgrade manager left them: status.upgrade under the AdminOps plane, the lock under its own.
    const ref = { name: "failed", namespace: ns };
    await writeAdminOpsConcern(client, ref, "upgrade", () => ({
      targetVersion: "2.7.2",
      fromVersion: "2.6.2",
      currentPartition: 1,
      completedPods: [2],
      lastErrorReason: "StepDownFailed",
      failure,
    }));
    await new OperationLockStore(client).acquire(ref, upgradeLock("failed", "2.6.2"));
    await manager().reconcile(`${ns}/failed`, rc);
    let c = await upgrading("failed");
    assert.equal(c?.reason, "UpgradeFailed");
    assert.match(c!.message, /StepDownFailed: step-down refused \(change spec\.upgrade\.requests\.retry/);
    let s = (await get("failed")).status!;
    assert.deepEqual(s.upgrade?.failure, failure);
    assert.equal(s.operationLock?.holder, "upgrade/failed/from-2.6.2", "the failed upgrade keeps its lock");

    // A retry value: the failure is cleared and the value recorded as handled in the same write.
    await client.mergePatch(OPENBAOCLUSTER, "failed", ns, {
      spec: { upgrade: { requests: { retry: "r1" } } },
    });
    await manager().reconcile(`${ns}/failed`, rc);
    s = (await get("failed")).status!;
    assert.equal(s.upgrade?.failure, undefined);
    assert.equal(s.upgrade?.lastErrorReason, undefined);
    assert.equal(s.upgrade?.currentPartition, 1, "the roll resumes where it stopped");
    assert.deepEqual(s.upgrade?.completedPods, [2]);
    assert.equal(s.upgradeRequests?.lastHandledRetry, "r1");
    await eventually(
      async () => ((await events("UpgradeRetryAccepted")).length === 1 ? true : undefined),
      10_000,
      "the retry event",
    );

    // A new failure is not retried by the old value.
    await writeAdminOpsConcern(client, ref, "upgrade", (u) => ({ ...u!, failure }));
    await manager().reconcile(`${ns}/failed`, rc);
    c = await upgrading("failed");
    assert.equal(c?.reason, "UpgradeFailed");
    assert.deepEqual((await get("failed")).status?.upgrade?.failure, failure);
    assert.equal((await events("UpgradeRetryAccepted")).length, 1);
  });
});

describe("openbao upgrade: failed steps are counted in status, across operator restarts", () => {
  let client: KubeClient;
  let ns: string;
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  // Each pass is a new manager: what a restarted (or crash-looping) operator would run.
  const manager = () => freshManager(client, { maxAttempts: 3 });
  const upgrade = async () => (await client.get<OpenBaoCluster>(OPENBAOCLUSTER, "flaky", ns)).status?.upgrade;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obupf");
    await createOpenBaoCluster(client, ns, "flaky", { version: "2.7.2", replicas: 3 });
    await client.mergePatch(
      OPENBAOCLUSTER,
      "flaky",
      ns,
      { status: { initialized: true, currentVersion: "2.6.2" } },
      "status",
    );
    // In flight, and no token anywhere: every step fails with AuthenticationRequired.
    await writeAdminOpsConcern(client, { name: "flaky", namespace: ns }, "upgrade", () => ({
      targetVersion: "2.7.2",
      fromVersion: "2.6.2",
      startedAt: "2026-12-01T10:00:00Z",
      currentPartition: 2,
      completedPods: [],
    }));
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("each failed step adds one to status.upgrade.consecutiveFailures; the limit fails the roll", async () => {
    await manager().reconcile(`${ns}/flaky`, rc);
    let u = await upgrade();
    assert.equal(u?.consecutiveFailures, 1);
    assert.equal(u?.lastErrorReason, "AuthenticationRequired");
    assert.equal(u?.failure, undefined, "one failure is retried");
    await manager().reconcile(`${ns}/flaky`, rc);
    assert.equal((await upgrade())?.consecutiveFailures, 2, "a new process goes on counting");
    await manager().reconcile(`${ns}/flaky`, rc);
    u = await upgrade();
    assert.equal(u?.consecutiveFailures, 3);
    assert.equal(u?.failure?.reason, "AuthenticationRequired");
    assert.match(u?.failure?.message ?? "", /\(3 attempts\)/);
  });
});

describe("openbao upgrade: spec.version moving while a roll is in flight", () => {
  let client: KubeClient;
  let ns: string;
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  const manager = () => freshManager(client);
  const get = () => client.get<OpenBaoCluster>(OPENBAOCLUSTER, "moving", ns);
  const inFlight = {
    targetVersion: "2.7.2",
    fromVersion: "2.6.2",
    startedAt: "2026-12-01T10:00:00Z",
    currentPartition: 1,
    completedPods: [2],
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obupm");
    await createOpenBaoCluster(client, ns, "moving", { version: "2.7.2", replicas: 3 });
    await client.mergePatch(
      OPENBAOCLUSTER,
      "moving",
      ns,
      { status: { initialized: true, currentVersion: "2.6.2" } },
      "status",
    );
    await writeAdminOpsConcern(client, { name: "moving", namespace: ns }, "upgrade", () => inFlight);
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("an older version than the target is refused and the roll is held as it is", async () => {
    await client.mergePatch(OPENBAOCLUSTER, "moving", ns, { spec: { version: "2.6.2" } });
    assert.equal(await manager().reconcile(`${ns}/moving`, rc), undefined);
    const c = await get();
    assert.deepEqual(c.status?.upgrade, inFlight);
    const cond = c.status?.conditions?.find((x) => x.type === "Upgrading");
    assert.equal(cond?.reason, "DowngradeBlocked");
    assert.match(cond!.message, /only a newer version can replace the target; the roll is held/);
  });

  it("a newer version retargets: every pod is rolled again from the top, under the same lock holder", async () => {
    await client.mergePatch(OPENBAOCLUSTER, "moving", ns, { spec: { version: "2.7.3" } });
    await manager().reconcile(`${ns}/moving`, rc);
    const u = (await get()).status?.upgrade;
    assert.equal(u?.targetVersion, "2.7.3");
    assert.equal(u?.fromVersion, "2.6.2");
    assert.equal(u?.currentPartition, 3);
    assert.deepEqual(u?.completedPods, []);
  });
});
