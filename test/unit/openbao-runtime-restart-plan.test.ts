import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OpenBaoClusterReason as R } from "../../src/apis/openbaocluster-names.js";
import { exponentialDelay } from "../../src/runtime/backoff.js";
import { FAILURE_BASE_DELAY_MS, FAILURE_MAX_DELAY_MS } from "../../src/runtime/controller.js";
import { restartLock } from "../../src/targets/openbao/adminops/restart/manager.js";
import {
  type PodFacts,
  planRestart,
  podsToRestart,
  type RuntimeRestartStatus,
  restartCutoff,
} from "../../src/targets/openbao/adminops/restart/plan.js";
import {
  failedStepCondition,
  RESTART_STALLED_AFTER,
} from "../../src/targets/openbao/adminops/restart/stage.js";
import type { ClusterObservation } from "../../src/targets/openbao/adminops/upgrade/core/observe.js";

const NOW = new Date("2026-12-06T12:00:00Z");

const obs = (replicas: number, leader: number | undefined, patch: Partial<ClusterObservation> = {}) =>
  ({
    replicas,
    voters: Array.from({ length: replicas }, (_, ordinal) => ({
      ordinal,
      name: `b-${ordinal}`,
      exists: true,
      ready: true,
      terminating: false,
      sealed: false,
    })),
    leaderOrdinal: leader,
    raftHealthy: true,
    ...patch,
  }) as ClusterObservation;

const podMap = (uids: string[]) =>
  new Map<string, PodFacts>(uids.map((uid, i) => [`b-${i}`, { name: `b-${i}`, uid }]));

const record = (
  pending: [string, string][],
  extra: Partial<RuntimeRestartStatus> = {},
): RuntimeRestartStatus => ({
  restartAt: "x",
  pendingPods: pending.map(([name, uid]) => ({ name, uid })),
  restartedPods: [],
  ...extra,
});

const plan = (r: RuntimeRestartStatus, o: ClusterObservation, pods: Map<string, PodFacts>, settle = 20_000) =>
  planRestart({ record: r, obs: o, pods, now: NOW, stepDownSettleMs: settle });

describe("runtime restart: which pods and when", () => {
  it("the cutoff is the timestamp restartAt names, never later than now; any other text means now", () => {
    assert.equal(restartCutoff("2026-12-06T11:00:00Z", NOW).toISOString(), "2026-12-06T11:00:00.000Z");
    assert.equal(restartCutoff("2027-01-01T00:00:00Z", NOW), NOW);
    assert.equal(restartCutoff("please", NOW), NOW);
  });

  it("restarts the pods created before the cutoff (and those whose creation time is unknown)", () => {
    const pods: PodFacts[] = [
      { name: "b-10", uid: "u10", createdAt: "2026-12-06T10:00:00Z" },
      { name: "b-2", uid: "u2", createdAt: "2026-12-06T11:30:00Z" },
      { name: "b-1", uid: "u1" },
      { name: "b-0", uid: "u0", createdAt: "2026-12-06T12:00:00Z" },
    ];
    assert.deepEqual(podsToRestart(pods, new Date("2026-12-06T12:00:00Z")), [
      { name: "b-1", uid: "u1" },
      { name: "b-2", uid: "u2" },
      { name: "b-10", uid: "u10" },
    ]);
  });

  it("the lock holder is one per value, bounded whatever the value's length", () => {
    const a = restartLock("c", "2026-12-06T12:00:00Z");
    assert.equal(a.operation, "Restart");
    assert.deepEqual(restartLock("c", "2026-12-06T12:00:00Z"), a);
    assert.notEqual(restartLock("c", "other").holder, a.holder);
    assert.ok(restartLock("c", "x".repeat(253)).holder.length < 64);
  });
});

describe("runtime restart plan", () => {
  const all: [string, string][] = [
    ["b-0", "u0"],
    ["b-1", "u1"],
    ["b-2", "u2"],
  ];

  it("standbys first, highest ordinal first; the leader is left for last", () => {
    assert.deepEqual(plan(record(all), obs(3, 2), podMap(["u0", "u1", "u2"])), {
      kind: "delete",
      pod: { name: "b-1", uid: "u1" },
      leader: false,
    });
    assert.deepEqual(plan(record(all), obs(3, 0), podMap(["u0", "u1", "u2"])), {
      kind: "delete",
      pod: { name: "b-2", uid: "u2" },
      leader: false,
    });
  });

  it("a pod with a new UID is recorded replaced before anything else moves", () => {
    assert.deepEqual(plan(record(all), obs(3, 0), podMap(["u0", "u1", "new"])), {
      kind: "record-replaced",
      replaced: ["b-2"],
      remaining: [
        { name: "b-0", uid: "u0" },
        { name: "b-1", uid: "u1" },
      ],
    });
  });

  it("only the leader left: a step-down, then a wait for the settle time, never a deletion of the leader", () => {
    const pods = podMap(["u0", "n1", "n2"]);
    assert.deepEqual(plan(record([["b-0", "u0"]]), obs(3, 0), pods), {
      kind: "step-down",
      ordinal: 0,
      pod: { name: "b-0", uid: "u0" },
    });
    const asked = record([["b-0", "u0"]], { lastStepDownTime: "2026-12-06T11:59:55Z" });
    assert.equal(plan(asked, obs(3, 0), pods).kind, "wait");
    // Settled and still the leader: asked again.
    assert.equal(plan(asked, obs(3, 0), pods, 1_000).kind, "step-down");
    // Leadership moved: now a standby, it is deleted.
    assert.deepEqual(plan(asked, obs(3, 1), pods), {
      kind: "delete",
      pod: { name: "b-0", uid: "u0" },
      leader: false,
    });
  });

  it("a lone voter is restarted as the leader (no one to hand over to)", () => {
    assert.deepEqual(plan(record([["b-0", "u0"]]), obs(1, 0), podMap(["u0"])), {
      kind: "delete",
      pod: { name: "b-0", uid: "u0" },
      leader: true,
    });
  });

  it("waits while any voter is missing, not Ready, sealed, unreachable, or Raft is unhealthy", () => {
    const pods = podMap(["u0", "u1", "u2"]);
    const cases: [Partial<ClusterObservation["voters"][number]>, RegExp][] = [
      [{ exists: false }, /b-1 is being replaced/],
      [{ terminating: true }, /b-1 is being replaced/],
      [{ ready: false }, /b-1 is not Ready yet/],
      [{ sealed: true }, /b-1 is sealed/],
      [{ sealed: undefined }, /b-1 does not answer/],
    ];
    for (const [patch, message] of cases) {
      const o = obs(3, 0);
      o.voters[1] = { ...o.voters[1]!, ...patch };
      const step = plan(record(all), o, pods);
      assert.equal(step.kind, "wait");
      assert.match((step as { message: string }).message, message);
    }
    assert.equal(plan(record(all), obs(3, 0, { raftHealthy: undefined }), pods).kind, "wait");
    assert.equal(plan(record(all), obs(3, undefined), pods).kind, "wait");
  });

  it("finalizes when nothing is pending", () => {
    assert.deepEqual(plan(record([]), obs(3, 0), podMap(["a", "b", "c"])), { kind: "finalize" });
  });
});

describe("runtime restart failures: retried for ever, stalled said after a few", () => {
  it("the step's own reason and the attempt before the threshold; RestartStalled with the count and last reason from it on", () => {
    const one = failedStepCondition(R.StepDownFailed, "refused", 1);
    assert.deepEqual(one, { reason: "StepDownFailed", message: "restart step failed (attempt 1): refused" });
    assert.equal(
      failedStepCondition(R.AuthenticationRequired, "no token", RESTART_STALLED_AFTER - 1).reason,
      "AuthenticationRequired",
    );
    const stalled = failedStepCondition(R.StepDownFailed, "refused", RESTART_STALLED_AFTER);
    assert.equal(stalled.reason, "RestartStalled");
    assert.match(
      stalled.message,
      new RegExp(`${RESTART_STALLED_AFTER} failed attempts in a row, the last StepDownFailed: refused`),
    );
    assert.equal(failedStepCondition(R.RestartStepFailed, "x", 40).reason, "RestartStalled");
  });

  it("the runtime's failure backoff brings the stalled failure within a minute of the first (jitter included)", () => {
    let ms = 0;
    // Failures 1 .. N-1 each wait their backoff (plus at most 10 % jitter) before the next attempt.
    for (let f = 1; f < RESTART_STALLED_AFTER; f++)
      ms += exponentialDelay(f, FAILURE_BASE_DELAY_MS, FAILURE_MAX_DELAY_MS) * 1.1;
    assert.ok(ms < 60_000, `${ms} ms`);
  });
});
