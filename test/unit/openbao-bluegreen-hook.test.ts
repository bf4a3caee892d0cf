import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeObject } from "../../src/runtime/types.js";
import {
  buildHookJob,
  HOOK_CONTAINER,
  type HookObservation,
  hookOutcome,
  legacyHookJobName,
} from "../../src/targets/openbao/adminops/upgrade/bluegreen/hook.js";
import { planBlueGreen } from "../../src/targets/openbao/adminops/upgrade/bluegreen/plan.js";
import type {
  BlueGreenStatus,
  Observed,
  PlanSpec,
  PlanStatus,
} from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";

// biome-ignore lint/suspicious/noExplicitAny: test objects are read loosely
type Json = Record<string, any>;

const bg: BlueGreenStatus = {
  phase: "Syncing",
  operationID: "55747038",
  greenRevision: "2-7-2-8b685",
  greenVersion: "2.7.2",
  blueImage: "openbao/openbao:2.6.2",
  greenImage: "openbao/openbao:2.7.2",
  blueReplicas: 3,
  greenReplicas: 3,
  startTime: "2026-03-01T10:00:00Z",
  jobFailureCount: 0,
};
const hook = {
  image: "openbao/openbao:2.7.2",
  command: ["sh", "-c"],
  args: ["bao status"],
  timeoutSeconds: 90,
};
const cluster = (over: Json = {}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "gbao", namespace: "ns", uid: "u-1" },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...over },
  }) as OpenBaoCluster;
const job = (conditions: Json[]): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "gbao-validation-hook" },
  status: { conditions },
});
const pod = (terminated: Json, container = HOOK_CONTAINER): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  status: { containerStatuses: [{ name: container, state: { terminated } }] },
});

describe("blue-green pre-promotion hook: the Job", () => {
  it("runs the user's image and command once, within timeoutSeconds, pointed at green with the cluster CA", () => {
    const j = buildHookJob(cluster(), bg, hook, "cluster.local") as Json;
    assert.equal(j.metadata.name, "gbao-validation-hook");
    assert.equal(j.metadata.ownerReferences[0].uid, "u-1");
    assert.equal(j.spec.backoffLimit, 0);
    assert.equal(j.spec.activeDeadlineSeconds, 90);
    const c = j.spec.template.spec.containers[0];
    assert.equal(c.image, hook.image);
    assert.deepEqual([c.command, c.args], [["sh", "-c"], ["bao status"]]);
    const env = Object.fromEntries(c.env.map((e: Json) => [e.name, e.value]));
    assert.equal(env.BAO_ADDR, "https://gbao-2-7-2-8b685-0.gbao.ns.svc:8200");
    assert.equal(env.BAO_CACERT, "/var/run/openbao/ca/ca.crt");
    assert.equal(env.OPENBAO_GREEN_VERSION, "2.7.2");
    assert.equal(j.spec.template.spec.volumes[0].secret.secretName, "gbao-tls-server");
    assert.equal(j.spec.template.spec.automountServiceAccountToken, false);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  });

  it("defaults the timeout to 300 s, keeps the image's entrypoint, and mounts no CA without TLS", () => {
    const j = buildHookJob(
      cluster({ tls: { enabled: false } }),
      bg,
      { image: "check:1" },
      "example.org",
    ) as Json;
    assert.equal(j.spec.activeDeadlineSeconds, 300);
    const c = j.spec.template.spec.containers[0];
    assert.equal(c.command, undefined);
    assert.equal(c.args, undefined);
    assert.match(
      c.env.find((e: Json) => e.name === "BAO_ADDR").value,
      /^http:\/\/gbao-[a-z0-9-]+-0\.gbao\.ns\.svc:8200$/,
    );
    assert.equal(
      c.env.find((e: Json) => e.name === "BAO_CACERT"),
      undefined,
    );
    assert.equal(j.spec.template.spec.volumes, undefined);
  });

  it("carries upstream's name and component; the attempt is its run-id annotation", () => {
    const j = buildHookJob(cluster(), bg, hook, "cluster.local") as Json;
    assert.equal(j.metadata.labels["openbao.org/component"], "validation-hook");
    assert.equal(j.spec.template.metadata.labels["openbao.org/component"], "validation-hook");
    assert.equal(j.metadata.annotations["openbao.org/upgrade-run-id"], "55747038");
    const other = buildHookJob(cluster(), { ...bg, operationID: "other" }, hook, "cluster.local") as Json;
    assert.equal(other.metadata.name, j.metadata.name, "one name per cluster, as upstream's");
    assert.equal(other.metadata.annotations["openbao.org/upgrade-run-id"], "other");
  });

  it("still knows the per-attempt name hooks had before, within 63 characters", () => {
    assert.equal(legacyHookJobName("gbao", bg), "gbao-pre-promotion-55747038");
    const long = legacyHookJobName("x".repeat(63), bg);
    assert.ok(long.length <= 63, long);
    assert.match(long, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  it("reads success, a non-zero exit and a timeout, never the hook's output", () => {
    assert.equal(hookOutcome(job([]), []).state, "Running");
    assert.equal(hookOutcome(job([{ type: "Complete", status: "True" }]), []).state, "Succeeded");
    const exit3 = hookOutcome(job([{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }]), [
      pod({ exitCode: 3, reason: "Error", message: "secret=hunter2" }),
    ]);
    assert.deepEqual(exit3, {
      state: "Failed",
      jobName: "gbao-validation-hook",
      message: "exited with status 3",
    });
    const late = hookOutcome(job([{ type: "Failed", status: "True", reason: "DeadlineExceeded" }]), []);
    assert.match(late.message ?? "", /timeoutSeconds/);
    // A hook Job made before the container took upstream's name ("validation") still reports its exit.
    assert.equal(HOOK_CONTAINER, "validation");
    const old = hookOutcome(job([{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }]), [
      pod({ exitCode: 4, reason: "Error" }, "hook"),
    ]);
    assert.equal(old.message, "exited with status 4");
    const other = hookOutcome(job([{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }]), [
      pod({ exitCode: 5, reason: "Error" }, "sidecar"),
    ]);
    assert.equal(
      other.message,
      "failed (BackoffLimitExceeded)",
      "another container's exit is not the hook's",
    );
  });
});

describe("blue-green pre-promotion hook: the plan", () => {
  const spec = (settings: PlanSpec["settings"]): PlanSpec => ({
    version: "2.7.2",
    image: "openbao/openbao:2.7.2",
    replicas: 3,
    settings,
    requests: {},
  });
  const status: PlanStatus = {
    currentVersion: "2.6.2",
    currentImage: "openbao/openbao:2.6.2",
    blueGreen: bg,
  };
  const synced = (h?: HookObservation): Observed => ({
    now: new Date("2026-03-01T10:05:00Z"),
    greenReady: 3,
    blueReady: 3,
    raft: {
      greenJoined: true,
      greenCaughtUp: true,
      greenVoting: false,
      blueDemoted: false,
      blueVoting: true,
      greenDemoted: true,
      leaderOnGreen: false,
      leaderOnBlue: true,
      leaderSideFollowersVote: true,
      bluePresent: 3,
      greenPresent: 3,
      blueQuorum: true,
    },
    hook: h,
  });
  const ids = { operationID: "x", greenRevision: "y", nonce: "z" };
  const withHook = { verification: { prePromotionHook: hook } } as PlanSpec["settings"];
  const name = "gbao-validation-hook";

  it("starts the hook once green is in sync, waits for it, promotes after it succeeded", () => {
    const start = planBlueGreen(spec(withHook), status, synced(), ids);
    assert.equal(start.startHook, true);
    assert.equal(start.blueGreen?.phase, "Syncing");
    const running = planBlueGreen(spec(withHook), status, synced({ state: "Running", jobName: name }), ids);
    assert.equal(running.startHook, undefined);
    assert.equal(running.blueGreen?.phase, "Syncing");
    const ok = planBlueGreen(spec(withHook), status, synced({ state: "Succeeded", jobName: name }), ids);
    assert.equal(ok.blueGreen?.phase, "Promoting");
  });

  it("does not start the hook before green caught up", () => {
    const behind = synced();
    behind.raft = { ...behind.raft!, greenCaughtUp: false };
    assert.equal(planBlueGreen(spec(withHook), status, behind, ids).startHook, undefined);
  });

  it("a failed hook rolls back (green never voted: RollbackCleanup), or holds when onValidationFailure is off", () => {
    const failed = synced({ state: "Failed", jobName: name, message: "exited with status 3" });
    const back = planBlueGreen(spec(withHook), status, failed, ids);
    assert.equal(back.blueGreen?.phase, "RollbackCleanup");
    assert.match(back.blueGreen?.rollbackReason ?? "", /pre-promotion hook .* exited with status 3/);
    assert.equal(back.condition?.reason, "UpgradeRollback");
    const off = {
      ...withHook,
      autoRollback: { enabled: true, onValidationFailure: false },
    } as PlanSpec["settings"];
    const held = planBlueGreen(spec(off), status, failed, ids);
    assert.equal(held.blueGreen?.phase, "Syncing");
    assert.equal(held.condition?.reason, "UpgradeFailed");
    assert.deepEqual(held.actions, []);
    // As the runbook says: a promote request does not pass a failed hook; a rollback request ends it.
    const asked = (requests: PlanSpec["requests"]) =>
      planBlueGreen({ ...spec(off), requests }, status, failed, ids);
    assert.equal(asked({ promote: "p1" }).blueGreen?.phase, "Syncing");
    assert.equal(asked({ promote: "p1" }).condition?.reason, "UpgradeFailed");
    assert.equal(asked({ rollback: "r1" }).blueGreen?.phase, "RollbackCleanup");
  });

  it("without a hook nothing waits for one", () => {
    assert.equal(planBlueGreen(spec(undefined), status, synced(), ids).blueGreen?.phase, "Promoting");
  });
});
