import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isConflict } from "../../src/runtime/errors.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import type { ClusterRef } from "../../src/targets/openbao/identity.js";
import {
  ADMINOPS_FIELD_MANAGER,
  backupHolder,
  LOCK_FIELD_MANAGER,
  type LockIdentity,
  LostRacesError,
  OperationLockStore,
  restoreHolder,
  upgradeHolder,
  WORKLOAD_FIELD_MANAGER,
  writeAdminOpsConcern,
} from "../../src/targets/openbao/opslifecycle/index.js";
import { nextStatus, type PassResult } from "../../src/targets/openbao/status.js";
import { applyWorkloadStatus } from "../../src/targets/openbao/status-apply.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// The three writers of OpenBaoCluster.status on the real API server: the lock (its own field
// manager), the AdminOps plane (backup and upgrade concerns, fresh read + whole-plane apply) and the
// workload controller's status write (forced, from a copy read before the others wrote). They run
// at once, in loops; afterwards every increment of every concern is there (no lost update), the lock
// never had two holders, and managedFields show each plane owned by its writer alone.

const ROUNDS = Number(process.env["OPSLIFECYCLE_ROUNDS"] ?? 25);

const settled = (ready: number): PassResult => ({
  initialized: true,
  desiredReplicas: 3,
  readyReplicas: ready,
  activeLeader: "bao-0",
  sealed: false,
});

/** Top-level status fields (and condition types) each manager owns, from managedFields. */
function owners(c: OpenBaoCluster): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const m of (c.metadata.managedFields ?? []) as {
    manager: string;
    subresource?: string;
    fieldsV1?: { "f:status"?: Record<string, Record<string, unknown>> };
  }[]) {
    const status = m.fieldsV1?.["f:status"];
    if (!status) continue;
    const set = out.get(m.manager) ?? new Set<string>();
    for (const [k, v] of Object.entries(status)) {
      if (k === "f:conditions")
        for (const ck of Object.keys(v)) {
          const t = /"type":"([^"]+)"/.exec(ck)?.[1];
          if (t) set.add(`condition:${t}`);
        }
      else if (k !== ".") set.add(k.slice(2));
    }
    out.set(m.manager, set);
  }
  return out;
}

describe("operation lock and status planes on the real API server", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "ot-opslock");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  const fresh = (ref: ClusterRef) => client.get<OpenBaoCluster>(OPENBAOCLUSTER, ref.name, ref.namespace);

  it("a status apply carrying an older resourceVersion is refused with 409 (what every plane write rests on)", async () => {
    const c = await createOpenBaoCluster(client, ns, "rv", { replicas: 1 });
    const ref = { name: "rv", namespace: ns };
    await applyWorkloadStatus(client, c, { readyReplicas: 1 });
    const err = await client
      .applyStatus(
        OPENBAOCLUSTER,
        {
          apiVersion: c.apiVersion,
          kind: c.kind,
          metadata: { name: "rv", namespace: ns, resourceVersion: c.metadata.resourceVersion },
          status: { operationLock: { operation: "Backup", holder: "x" } },
        },
        { fieldManager: LOCK_FIELD_MANAGER },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(isConflict(err), `expected 409, got ${String(err)}`);
    assert.equal((await fresh(ref)).status?.operationLock, undefined);
  });

  it("concurrent backup and upgrade writers, two lock holders and the workload writer lose nothing", async () => {
    const c = await createOpenBaoCluster(client, ns, "race", { replicas: 3 });
    const ref = { name: "race", namespace: ns };
    const store = new OperationLockStore(client);
    let retries = 0;
    let requeues = 0;
    const started = Date.now();
    /** What a controller does with a write that lost too many races: tries again on its next pass. */
    const requeued = async <T>(write: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          return await write();
        } catch (e) {
          if (!(e instanceof LostRacesError)) throw e;
          requeues++;
        }
      }
    };

    // Each AdminOps writer counts in its own concern; a lost update would leave a count short.
    const counter = (concern: "backup" | "upgrade") => async () => {
      for (let i = 1; i <= ROUNDS; i++) {
        const r = await requeued(() =>
          concern === "backup"
            ? writeAdminOpsConcern(client, ref, "backup", (b) => ({
                ...b,
                consecutiveFailures: (b?.consecutiveFailures ?? 0) + 1,
                lastBackupTime: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace(/\.\d+Z$/, "Z"),
              }))
            : writeAdminOpsConcern(client, ref, "upgrade", (u) => ({
                ...u,
                targetVersion: "2.8.0",
                currentPartition: (u?.currentPartition ?? 0) + 1,
              })),
        );
        retries += r.retries;
      }
    };
    const conditionWriter = async () => {
      for (let i = 1; i <= ROUNDS; i++) {
        const r = await requeued(() =>
          writeAdminOpsConcern(client, ref, "conditions", () => [
            {
              type: "BackingUp",
              status: "True",
              reason: "BackupInProgress",
              message: `round ${i}`,
              lastTransitionTime: "2026-01-01T00:00:00Z",
            },
          ]),
        );
        retries += r.retries;
      }
    };

    // Mutual exclusion: holders in the critical section, checked on every entry.
    let inside = 0;
    let maxInside = 0;
    const acquisitions = new Map<string, number>();
    const holder = (id: LockIdentity) => async () => {
      let got = 0;
      let attempts = 0;
      while (got < ROUNDS / 5 && attempts < ROUNDS * 20) {
        attempts++;
        const a = await requeued(() => store.acquire(ref, id, { message: "test" }));
        if (!a.acquired) {
          assert.notEqual(a.heldBy.holder, id.holder);
          // Back off a little so the two holders do not spin on the API server.
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        inside++;
        maxInside = Math.max(maxInside, inside);
        got++;
        // Still ours on the server, whatever the other writers did meanwhile.
        const seen = (await fresh(ref)).status?.operationLock;
        assert.equal(seen?.holder, id.holder, "the lock changed hands while held");
        inside--;
        const r = await requeued(() => store.release(ref, id));
        assert.equal(r.released, true);
      }
      acquisitions.set(id.holder, got);
    };

    // The workload writer plans from a copy read earlier, as from an informer that lags.
    let workloadWrites = 0;
    const workload = async () => {
      for (let i = 1; i <= ROUNDS; i++) {
        const stale = await fresh(ref);
        await new Promise((r) => setImmediate(r));
        const next = nextStatus(stale, settled(i % 3), new Date());
        await applyWorkloadStatus(client, stale, next);
        workloadWrites++;
      }
      // The last word on readyReplicas, to check after the race.
      await applyWorkloadStatus(client, c, nextStatus(await fresh(ref), settled(3), new Date()));
    };

    const a: LockIdentity = { operation: "Backup", holder: backupHolder("race", "w-1") };
    const b: LockIdentity = { operation: "Upgrade", holder: upgradeHolder("race", "u-1") };
    await Promise.all([
      counter("backup")(),
      counter("upgrade")(),
      conditionWriter(),
      holder(a)(),
      holder(b)(),
      workload(),
    ]);
    const ms = Date.now() - started;

    const end = await fresh(ref);
    const s = end.status ?? {};
    assert.equal(s.backup?.consecutiveFailures, ROUNDS, "a backup update was lost");
    assert.equal(s.upgrade?.currentPartition, ROUNDS, "an upgrade update was lost");
    assert.equal(s.upgrade?.targetVersion, "2.8.0");
    assert.equal(s.lastBackupTime, s.backup?.lastBackupTime);
    assert.equal(s.conditions?.find((x) => x.type === "BackingUp")?.message, `round ${ROUNDS}`);
    assert.equal(s.readyReplicas, 3);
    assert.equal(s.conditions?.find((x) => x.type === "Available")?.status, "True");
    assert.equal(s.operationLock, undefined, "the lock outlived the last release");
    assert.equal(maxInside, 1);
    assert.equal(acquisitions.get(a.holder), ROUNDS / 5);
    assert.equal(acquisitions.get(b.holder), ROUNDS / 5);

    const own = owners(end);
    const workloadOwns = own.get(WORKLOAD_FIELD_MANAGER) ?? new Set();
    const adminOwns = own.get(ADMINOPS_FIELD_MANAGER) ?? new Set();
    for (const f of ["backup", "upgrade", "lastBackupTime", "operationLock", "condition:BackingUp"])
      assert.equal(workloadOwns.has(f), false, `the workload writer owns ${f}`);
    for (const f of ["readyReplicas", "phase", "condition:Available", "operationLock"])
      assert.equal(adminOwns.has(f), false, `the AdminOps writer owns ${f}`);
    assert.ok(adminOwns.has("backup") && adminOwns.has("upgrade") && adminOwns.has("condition:BackingUp"));
    console.log(
      `opslifecycle race: ${ROUNDS} rounds x 6 writers in ${ms} ms; ${workloadWrites} workload writes; ` +
        `${retries} AdminOps re-reads after lost races, ${requeues} writes requeued after 20; lock taken ${ROUNDS / 5}+${ROUNDS / 5} times, max holders ${maxInside}`,
    );
  });

  it("release only by the exact holder; takeover by restore override; the old holder cannot release it", async () => {
    await createOpenBaoCluster(client, ns, "take", { replicas: 1 });
    const ref = { name: "take", namespace: ns };
    const store = new OperationLockStore(client);
    const bk: LockIdentity = { operation: "Backup", holder: backupHolder("take", "w-9") };
    const rs: LockIdentity = { operation: "Restore", holder: restoreHolder(ns, "r1") };
    assert.equal((await store.acquire(ref, bk)).acquired, true);
    const again = await store.acquire(ref, bk);
    assert.deepEqual([again.acquired, again.acquired && again.wrote], [true, false]);
    const contended = await store.acquire(ref, rs);
    assert.equal(contended.acquired, false);
    const notMine = await store.release(ref, rs);
    assert.equal(notMine.released, false);
    assert.equal((await fresh(ref)).status?.operationLock?.holder, bk.holder);

    const t = await store.forceTakeover(ref, rs, { kind: "restore-override", restore: `${ns}/r1` });
    assert.equal(t.previous?.holder, bk.holder);
    const lock = (await fresh(ref)).status?.operationLock;
    assert.equal(lock?.holder, rs.holder);
    assert.equal(lock?.operation, "Restore");
    assert.match(lock?.message ?? "", /overrideOperationLock/);
    assert.equal(
      (await store.forceTakeover(ref, rs, { kind: "restore-override", restore: "x" })).wrote,
      false,
    );
    assert.equal((await store.release(ref, bk)).released, false);
    assert.equal((await store.acquire(ref, bk)).acquired, false);
    // The backup still in flight renews: not its lock any more, so nothing is written.
    const lost = await store.renew(ref, bk);
    assert.deepEqual([lost.held, lost.current?.holder], [false, rs.holder]);
    assert.equal((await store.renew(ref, rs)).held, true);
    assert.deepEqual(await store.release(ref, rs), { released: true, wrote: true });
    assert.equal((await fresh(ref)).status?.operationLock, undefined);
    // Released by the restore: renewing never takes a free lock back.
    assert.equal((await store.renew(ref, bk)).held, false);
    assert.equal((await fresh(ref)).status?.operationLock, undefined);
    assert.deepEqual(await store.release(ref, rs), { released: true, wrote: false });
  });

  it("recovers from a field conflict and from a lock co-owned by another manager", async () => {
    const c = await createOpenBaoCluster(client, ns, "ssa", { replicas: 1 });
    const ref = { name: "ssa", namespace: ns };
    const store = new OperationLockStore(client);
    const bk: LockIdentity = { operation: "Backup", holder: backupHolder("ssa", "w-1") };
    // Someone emptied the lock by hand under their own manager: free, but their field.
    const byHand = (lock: Record<string, unknown>) =>
      client.applyStatus(
        OPENBAOCLUSTER,
        {
          apiVersion: c.apiVersion,
          kind: c.kind,
          metadata: { name: "ssa", namespace: ns },
          status: { operationLock: lock },
        },
        { fieldManager: "kubectl-edit", force: true },
      );
    await byHand({});
    const got = await store.acquire(ref, bk);
    assert.equal(got.acquired, true);
    assert.equal((await fresh(ref)).status?.operationLock?.holder, bk.holder);
    // A writer that copied the whole status now co-owns the same value: release still removes it.
    await byHand((await fresh(ref)).status!.operationLock!);
    assert.ok(
      owners(await fresh(ref))
        .get("kubectl-edit")
        ?.has("operationLock"),
    );
    assert.deepEqual(await store.release(ref, bk), { released: true, wrote: true });
    assert.equal((await fresh(ref)).status?.operationLock, undefined);
  });
});
