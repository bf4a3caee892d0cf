// Read-your-writes, end to end on the real API server (issue 43's follow-up, seen in a CI run of
// openbao-runbooks-node): once a blue-green rollback has finished (blueGreen Idle, the lock released,
// Upgrading=False UpgradeRollback), no later pass may act on a cached OpenBaoCluster older than those
// writes. One that did read blueGreen.phase RollbackCleanup, took the operation lock again, counted
// openbao_upgrade_failure_total and told of the rollback a second time.
//
// The interleaving is made on purpose rather than hoped for: the operator's watch of OpenBaoClusters
// is held (its events queue up, in order, as behind a slow watch), and the answer to a status write
// the operator's client made just before the rollback's pass (another concern's, as the workload
// controller's) arrives only after that pass's own writes: the answers of concurrent writes do come
// back in another order than the server made them. Then a pod event asks for a pass.
//
// Raft is a one-server OpenBao on loopback standing in for the pods (no node here): the rollback's
// cleanup reads Autopilot's state from it and finds no green server left.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { EVENTS_V1, POD, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient, WatchEvent } from "../../src/runtime/client.js";
import { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { activeWorkers, reconcileDeferred, reconcileTotal } from "../../src/runtime/metrics.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { BlueGreenUpgrade } from "../../src/targets/openbao/adminops/upgrade/bluegreen/manager.js";
import { upgradeLock } from "../../src/targets/openbao/adminops/upgrade/core/lock.js";
import { upgradeFailureTotal } from "../../src/targets/openbao/adminops/upgrade/core/metrics.js";
import { ADMINOPS_CONTROLLER_NAME, setupAdminOps } from "../../src/targets/openbao/adminops/wiring.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { clusterNames, LABEL_CLUSTER, LABEL_COMPONENT } from "../../src/targets/openbao/identity.js";
import { ADMINOPS_FIELD_MANAGER, LOCK_FIELD_MANAGER } from "../../src/targets/openbao/opslifecycle/planes.js";
import { ROOT_TOKEN_KEY } from "../../src/targets/openbao/workload/init/init.js";
import { type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

const NAME = "gbao";
const GREEN = "2-7-2-abcde";
const CONCURRENT = "test-concurrent-writer";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

async function metricValue(
  metric: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number }[] }> },
  labels: Record<string, string>,
): Promise<number> {
  return (await metric.get()).values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0);
}

/**
 * The operator's client, with two handles on time: `hold()` keeps the OpenBaoCluster watch's events
 * back (in order) until `release()`; and the answer to a write under CONCURRENT comes back only once
 * `answer()` is called, although the server made it at once.
 */
function slowClient(kubeconfig: string) {
  const client = clientFor(kubeconfig);
  let holding = false;
  const held: (() => void)[] = [];
  const watch = client.watch.bind(client);
  client.watch = (type, opts, onEvent) =>
    watch(type, opts, (e: WatchEvent) => {
      if (type.plural !== OPENBAOCLUSTER.plural || (!holding && held.length === 0)) return onEvent(e);
      held.push(() => onEvent(e));
    });
  let answer!: () => void;
  const answered = new Promise<void>((r) => {
    answer = r;
  });
  const request = client.request.bind(client);
  client.request = (async (spec: Parameters<KubeClient["request"]>[0]) => {
    const out = await request(spec);
    if ((spec.query as Record<string, unknown> | undefined)?.["fieldManager"] === CONCURRENT) await answered;
    return out;
  }) as KubeClient["request"];
  return {
    client,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const deliver of held.splice(0)) deliver();
    },
    answer: () => answer(),
  };
}

describe("read-your-writes: a finished blue-green rollback is not acted on again from a cache one write behind", () => {
  let admin: KubeClient;
  let ns: string;
  let raft: RaftOpenBao;
  let manager: Manager | undefined;
  let slow: ReturnType<typeof slowClient>;
  let history: Informer<OpenBaoCluster>;
  /** Every operationLock the cluster held, in order, as a watch of the test's own saw them. */
  const locks: string[] = [];

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    ns = await freshNamespace(admin, "obryw");
    raft = await startRaftOpenBao({ nodes: 1 });
    history = new Informer<OpenBaoCluster>(admin, OPENBAOCLUSTER, { namespaces: [ns], log: silentLogger() });
    const note = (c: OpenBaoCluster) => {
      const l = c.status?.operationLock;
      const id = l?.holder ? `${l.holder}@${l.acquiredAt}` : "free";
      if (locks.at(-1) !== id) locks.push(id);
    };
    history.addHandler({ add: note, update: (_, n) => note(n) });
    history.start();
    await history.waitForSync();
  });
  after(async () => {
    await manager?.stop();
    slow?.client.close();
    await history?.stop();
    await raft?.stop();
    await admin.delete(NAMESPACE, ns).catch(() => {});
    admin.close();
  });

  it("the rollback ends with one UpgradeRollback Warning, one failure counted and the lock taken by no later pass", async () => {
    // Arrange: a cluster whose rollback is in its last phase, its lock held by the attempt.
    await admin.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: clusterNames({ namespace: ns, name: NAME }).rootTokenSecret, namespace: ns },
      stringData: { [ROOT_TOKEN_KEY]: raft.rootToken },
    } as KubeObject);
    await createOpenBaoCluster(admin, ns, NAME, {
      version: "2.7.2",
      replicas: 1,
      tls: { enabled: false },
      upgrade: { strategy: "BlueGreen" },
    });
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const status = (fieldManager: string, s: Json) =>
      admin.applyStatus(
        OPENBAOCLUSTER,
        {
          apiVersion: "openbao.org/v1alpha1",
          kind: "OpenBaoCluster",
          metadata: { name: NAME, namespace: ns },
          status: s,
        },
        { fieldManager, force: true },
      );
    await status("test-workload", { initialized: true, currentVersion: "2.6.2" });
    const lock = upgradeLock(NAME, "2.6.2");
    await status(LOCK_FIELD_MANAGER, {
      operationLock: { operation: lock.operation, holder: lock.holder, acquiredAt: now, renewedAt: now },
    });
    await status(ADMINOPS_FIELD_MANAGER, {
      blueGreen: {
        phase: "RollbackCleanup",
        operationID: "op1",
        blueImage: "openbao/openbao:2.6.2",
        blueReplicas: 1,
        greenRevision: GREEN,
        greenReplicas: 1,
        greenVersion: "2.7.2",
        rollbackReason: "green cannot run: image pull",
        rollbackStartTime: now,
      },
      conditions: [
        {
          type: "Upgrading",
          status: "True",
          reason: "UpgradeInProgress",
          message: "rolling back",
          lastTransitionTime: now,
        },
      ],
    });

    // The operator's client makes a write of another concern whose answer is held back.
    slow = slowClient(sharedEnv().kubeconfigPath);
    const concurrent = slow.client.applyStatus(
      OPENBAOCLUSTER,
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: NAME, namespace: ns },
        status: { readyReplicas: 1 },
      },
      { fieldManager: CONCURRENT },
    );
    await eventually(
      async () =>
        (await admin.get<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns)).status?.readyReplicas === 1
          ? true
          : undefined,
      30_000,
      "the concurrent write made on the server",
    );

    // The operator: the AdminOps controller, its blue-green strategy reaching Raft on loopback.
    manager = new Manager({ target: "openbao", client: slow.client, log: silentLogger(), namespaces: [ns] });
    const config = parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "60s" }, "targets.openbao");
    const clusters = manager.informer<OpenBaoCluster>(OPENBAOCLUSTER);
    setupAdminOps(manager, config, clusters, {
      stores: async () => {
        throw new Error("no backups in this test");
      },
      blueGreen: new BlueGreenUpgrade({
        client: slow.client,
        events: manager.events,
        access: {
          clusterDomain: config.clusterDomain,
          reader: manager.reader,
          endpoint: (ep) => ({ address: raft.addr, timeoutMs: ep.timeoutMs }),
        },
      }).handle,
    });
    const labels = { namespace: ns, name: NAME, strategy: "BlueGreen" };
    const failuresBefore = await metricValue(upgradeFailureTotal, labels);
    // From its first list on, the cache learns nothing more of the cluster until release().
    slow.hold();
    await manager.start();

    // Act 1: the rollback's last pass (the first pass) finishes it.
    await eventually(
      async () => {
        const c = await admin.get<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns);
        const u = c.status?.conditions?.find((x) => x.type === "Upgrading");
        return c.status?.blueGreen?.phase === "Idle" &&
          !c.status?.operationLock &&
          u?.reason === "UpgradeRollback"
          ? c
          : undefined;
      },
      60_000,
      "the rollback finished: Idle, the lock released, Upgrading=False UpgradeRollback",
    );
    const passes = () => metricValue(reconcileTotal, { controller: ADMINOPS_CONTROLLER_NAME });
    const deferrals = () => metricValue(reconcileDeferred, { controller: ADMINOPS_CONTROLLER_NAME });
    const busy = () => metricValue(activeWorkers, { controller: ADMINOPS_CONTROLLER_NAME });
    await eventually(async () => ((await busy()) === 0 ? true : undefined), 30_000, "the pass to end");
    // The held answer arrives last, after the pass's own writes were answered.
    slow.answer();
    await concurrent;

    // Act 2: a pod of the cluster appears (as green's pods going do): the AdminOps controller looks again.
    const before = await passes();
    const deferredBefore = await deferrals();
    // No controller manager here makes the namespace's default ServiceAccount a pod needs.
    await admin.create(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    } as KubeObject);
    await admin.create(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `${NAME}-probe`,
        namespace: ns,
        labels: { [LABEL_CLUSTER]: NAME, [LABEL_COMPONENT]: "server" },
      },
      spec: { containers: [{ name: "c", image: "localhost/none:0" }] },
    } as KubeObject);
    // The pod's event reaches the controller before the cluster's held events do: the watch
    // catches up only once the pass it asked for ran (or was deferred, waiting for it).
    await eventually(
      async () => ((await passes()) > before || (await deferrals()) > deferredBefore ? true : undefined),
      60_000,
      "the pod to ask for a pass",
    );
    slow.release();
    await eventually(
      async () => ((await passes()) > before && (await busy()) === 0 ? true : undefined),
      60_000,
      "a pass after the pod appeared",
    );
    await manager.events.flush();

    // Assert: one rollback told, one failure counted, the lock taken by nobody after the rollback.
    const told = (
      await admin.list<
        KubeObject & { reason?: string; regarding?: { name?: string }; series?: { count?: number } }
      >(EVENTS_V1, { namespace: ns })
    ).items.filter((e) => e.reason === "UpgradeRollback" && e.regarding?.name === NAME);
    const times = told.reduce((n, e) => n + (e.series?.count ?? 1), 0);
    const failures = (await metricValue(upgradeFailureTotal, labels)) - failuresBefore;
    const taken = locks.filter((l) => l !== "free");
    const deferred = (await deferrals()) - deferredBefore;
    process.stdout.write(
      `# UpgradeRollback events ${times}, failures counted ${failures}, locks taken ${taken.length}, passes deferred ${deferred}\n`,
    );
    // All three at once, so a failure says the whole story.
    assert.deepEqual(
      { events: times, failures, taken, free: locks.at(-1) === "free" },
      { events: 1, failures: 1, taken: [`${lock.holder}@${now}`], free: true },
      "one UpgradeRollback Warning, one failure counted, the lock held by the attempt only and free at the end",
    );
  });
});
