import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import {
  eventType,
  nextStatus,
  type PassResult,
  statusChanged,
  transitions,
} from "../../src/targets/openbao/status.js";

const cluster = (status?: OpenBaoCluster["status"]): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u", generation: 4 },
    spec: { version: "2.7.2", storage: { size: "1Gi" } },
    ...(status ? { status } : {}),
  }) as OpenBaoCluster;

const t0 = new Date("2026-01-01T00:00:00Z");
const t1 = new Date("2026-01-01T00:05:00Z");
const settled: PassResult = {
  initialized: true,
  selfInitialized: false,
  desiredReplicas: 3,
  readyReplicas: 3,
  sealed: false,
  activeLeader: "demo-1",
  currentVersion: "2.7.2",
  tls: { ready: true, reason: OpenBaoClusterReason.OperatorManagedTLS, message: "ok" },
};
const cond = (s: OpenBaoCluster["status"], type: string) => s?.conditions?.find((c) => c.type === type);

describe("openbao status", () => {
  it("Deprecated names each earlier path with its replacement, as a Warning, and goes when none is left", () => {
    const deprecated = [
      "spec.tls.acme.domain is deprecated (removed upstream in 0.5): use spec.tls.acme.domains",
    ];
    const withOld = nextStatus(cluster(), { ...settled, deprecated }, t0);
    const c = cond(withOld, "Deprecated");
    assert.equal(c?.status, "True");
    assert.equal(c?.reason, "DeprecatedFields");
    assert.equal(c?.message, deprecated[0]);
    assert.equal(eventType(c!), "Warning");
    const after = nextStatus(cluster(withOld), { ...settled, deprecated: [] }, t1);
    assert.equal(cond(after, "Deprecated"), undefined);
  });

  it("the phase names the operation holding the lock once initialized: Upgrading, BackingUp; a restore reads Running", () => {
    const locked = (operation: "Upgrade" | "Backup" | "Restore") =>
      nextStatus(
        cluster({
          operationLock: {
            operation,
            holder: `${operation.toLowerCase()}/demo/x`,
            acquiredAt: t0.toISOString(),
          },
        }),
        settled,
        t1,
      );
    assert.equal(locked("Upgrade").phase, "Upgrading");
    assert.equal(locked("Backup").phase, "BackingUp");
    assert.equal(locked("Restore").phase, "Running");
    assert.equal(
      locked("Upgrade").operationLock,
      undefined,
      "the lock is not copied into the workload plane",
    );
    assert.equal(
      nextStatus(
        cluster({ operationLock: { operation: "Upgrade", holder: "upgrade/demo/x" } }),
        { ...settled, initialized: false },
        t1,
      ).phase,
      "Initializing",
    );
  });

  it("a settled cluster is Running and Available, every condition at the current generation", () => {
    const s = nextStatus(cluster(), settled, t0);
    assert.equal(s.phase, "Running");
    assert.equal(s.activeLeader, "demo-1");
    assert.equal(cond(s, "Available")?.status, "True");
    assert.equal(cond(s, "Degraded")?.status, "False");
    assert.equal(cond(s, "OpenBaoLeader")?.reason, "LeaderFound");
    for (const c of s.conditions ?? []) assert.equal(c.observedGeneration, 4);
  });

  it("a blocked step says where and why: waiting is not Degraded, a failure is", () => {
    const waiting = nextStatus(
      cluster(),
      {
        ...settled,
        initialized: false,
        readyReplicas: 0,
        blocked: {
          step: "initialization",
          reason: OpenBaoClusterReason.PodNotReady,
          message: "waiting for pod demo-0",
          failed: false,
        },
      },
      t0,
    );
    assert.equal(waiting.phase, "Initializing");
    assert.equal(cond(waiting, "Available")?.reason, "PodNotReady");
    assert.match(cond(waiting, "Available")?.message ?? "", /^initialization: waiting for pod demo-0/);
    assert.equal(cond(waiting, "Degraded")?.status, "False");
    assert.equal(cond(waiting, "OpenBaoInitialized")?.reason, "PodNotReady");
    const failed = nextStatus(
      cluster(),
      {
        ...settled,
        blocked: {
          step: "storage",
          reason: OpenBaoClusterReason.StorageResizeNotSupported,
          message: "no",
          failed: true,
        },
      },
      t0,
    );
    assert.equal(cond(failed, "Degraded")?.status, "True");
    assert.equal(cond(failed, "Degraded")?.reason, "StorageResizeNotSupported");
    assert.equal(cond(failed, "Available")?.status, "False");
  });

  it("Degraded=False gives the reason that is true: Idle when settled, Reconciling while waiting, Paused", () => {
    const degraded = (r: Partial<PassResult>) =>
      cond(nextStatus(cluster(), { ...settled, ...r }, t0), "Degraded");
    assert.deepEqual(
      [degraded({})?.status, degraded({})?.reason],
      ["False", "Idle"],
      "every step ran and every voter is ready",
    );
    assert.equal(degraded({ readyReplicas: 1 })?.reason, "Reconciling");
    assert.match(degraded({ readyReplicas: 1 })!.message, /1\/3 voters ready/);
    const waiting = degraded({
      blocked: {
        step: "infrastructure",
        reason: OpenBaoClusterReason.ScaleDownWaiting,
        message: "m",
        failed: false,
      },
    });
    assert.equal(waiting?.reason, "Reconciling");
    assert.match(waiting!.message, /infrastructure waits: ScaleDownWaiting/);
    assert.equal(degraded({ paused: true })?.reason, "Paused");
  });

  it("a gateway without the Gateway API is a condition of its own: the cluster stays Available", () => {
    const missing = { ready: false, reason: OpenBaoClusterReason.GatewayAPIMissing, message: "no HTTPRoute" };
    const s = nextStatus(cluster(), { ...settled, gateway: missing }, t0);
    assert.equal(cond(s, "GatewayReady")?.status, "False");
    assert.equal(cond(s, "GatewayReady")?.reason, "GatewayAPIMissing");
    assert.equal(cond(s, "Available")?.status, "True");
    assert.equal(cond(s, "Degraded")?.status, "False");
    const gone = nextStatus(cluster(s), { ...settled, gateway: null }, t0);
    assert.equal(cond(gone, "GatewayReady"), undefined, "spec.gateway removed: the condition goes");
    const kept = nextStatus(cluster(s), settled, t0);
    assert.equal(cond(kept, "GatewayReady")?.reason, "GatewayAPIMissing", "networking did not run: kept");
  });

  it("an unchanged pass changes nothing, even later; a new leader is a change", () => {
    const first = nextStatus(cluster(), settled, t0);
    const again = nextStatus(cluster(first), settled, t1);
    assert.equal(statusChanged(first, again), false);
    const moved = nextStatus(cluster(first), { ...settled, activeLeader: "demo-2" }, t1);
    assert.equal(statusChanged(first, moved), true);
  });

  it("leaves the AdminOps plane and the lock out of its intent, and does not count them as change", () => {
    const foreign = {
      backup: { consecutiveFailures: 2 },
      lastBackupTime: "2026-01-01T00:00:00Z",
      operationLock: { operation: "Backup" as const, holder: "backup/demo/w1" },
      conditions: [
        {
          type: "BackingUp",
          status: "True" as const,
          reason: "BackupInProgress",
          message: "job running",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    };
    const s = nextStatus(cluster(foreign), settled, t0);
    assert.equal(s.backup, undefined);
    assert.equal(s.lastBackupTime, undefined);
    assert.equal(s.operationLock, undefined);
    assert.equal(
      s.conditions?.some((c) => c.type === "BackingUp"),
      false,
    );
    // The same workload plane next to other writers' fields is no change.
    assert.equal(
      statusChanged({ ...s, ...foreign, conditions: [...(s.conditions ?? []), ...foreign.conditions] }, s),
      false,
    );
  });

  it("turns condition transitions into events, warnings for bad states", () => {
    const before = nextStatus(cluster(), { ...settled, readyReplicas: 1 }, t0);
    const after = nextStatus(cluster(before), settled, t1);
    const moved = transitions(before.conditions, after.conditions ?? []);
    assert.deepEqual(
      moved.map((c) => c.type),
      ["Available"],
    );
    assert.equal(eventType(moved[0]!), "Normal");
    const sealed = nextStatus(cluster(), { ...settled, sealed: true }, t0);
    assert.equal(eventType(cond(sealed, "OpenBaoSealed")!), "Warning");
  });
});
