import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GitLabCoreStatus } from "../../src/apis/gitlabcore.js";
import { GitLabCoreReason } from "../../src/apis/gitlabcore-names.js";
import { findCondition } from "../../src/runtime/conditions.js";
import { sameStatus } from "../../src/runtime/status.js";
import { parseGitLabConfig } from "../../src/targets/gitlab/config.js";
import { type PassOutcome, planStatus } from "../../src/targets/gitlab/status/plan.js";

const t0 = new Date("2026-01-01T00:00:00Z");
const t1 = new Date("2026-01-01T00:05:00Z");
const applied = (over: Partial<Extract<PassOutcome, { kind: "applied" }>> = {}): PassOutcome => ({
  kind: "applied",
  targetVersion: "10.3.0",
  chartVersion: "10.3.0",
  gitlabVersion: "18.3.0",
  hooksRan: true,
  renderedKinds: ["apps/v1/Deployment", "v1/ConfigMap"],
  workloads: { ready: ["Deployment gl/web"], notReady: [] },
  stepping: false,
  ...over,
});
const c = (s: GitLabCoreStatus, type: string) => findCondition(s.conditions as never, type);

describe("gitlab status plan", () => {
  it("a kept target with an unreadable versionRef: Upgradeable=False once, a repeat pass changes nothing", () => {
    const notice = { reason: GitLabCoreReason.VersionUnresolved, message: "spec.version.versionRef: gone" };
    const first = planStatus(undefined, 2, applied({ notice }), t0, "10.3.0");
    assert.equal(first.status.phase, "Running");
    assert.equal(first.status.availableVersion, "10.3.0");
    assert.equal(c(first.status, "Upgradeable")?.status, "False");
    assert.equal(c(first.status, "Upgradeable")?.reason, "VersionUnresolved");
    const again = planStatus(first.status, 2, applied({ notice }), t1);
    assert.ok(sameStatus(first.status, again.status), "nothing to write");
    assert.deepEqual(again.events, []);
  });
  it("a first install that converges: Running, every field, Initialized carrying the generation", () => {
    const { status, events } = planStatus(undefined, 3, applied(), t0);
    assert.equal(status.phase, "Running");
    assert.equal(status.version, "10.3.0");
    assert.equal(status.hooksVersion, "10.3.0");
    assert.equal(status.gitlabVersion, "18.3.0");
    assert.equal(status.targetVersion, "10.3.0");
    assert.deepEqual(status.renderedKinds, ["apps/v1/Deployment", "v1/ConfigMap"]);
    assert.equal(c(status, "Initialized")?.status, "True");
    assert.equal(c(status, "Initialized")?.observedGeneration, 3);
    assert.equal(c(status, "Available")?.reason, "WorkloadsReady");
    assert.equal(c(status, "Upgradeable")?.status, "True");
    assert.ok(events.some((e) => e.reason === "ChartRendered"));
    assert.ok(events.every((e) => e.type === "Normal"));
  });

  it("the same outcome again changes nothing and says nothing (a quiet pass)", () => {
    const first = planStatus(undefined, 3, applied(), t0).status;
    const again = planStatus(first, 3, applied({ hooksRan: false }), t1);
    assert.ok(sameStatus(first, again.status));
    assert.deepEqual(again.events, []);
  });

  it("an apply failure keeps Initialized (the retry runs no hooks) and names the kind in Available", () => {
    const first = planStatus(undefined, 1, applied(), t0).status;
    const { status, events } = planStatus(
      first,
      1,
      {
        kind: "failed",
        stage: "apply",
        reason: GitLabCoreReason.ApplyFailed,
        message: "kind gateway.networking.k8s.io/v1/GatewayClass is not served by the cluster",
      },
      t1,
    );
    assert.equal(status.phase, "Failed");
    assert.equal(c(status, "Initialized")?.status, "True");
    assert.equal(c(status, "Available")?.status, "False");
    assert.match(c(status, "Available")!.message, /GatewayClass/);
    assert.ok(events.some((e) => e.type === "Warning" && e.reason === "ApplyFailed"));
  });

  it("a hook or render failure sets Initialized False so the next pass runs the hooks again", () => {
    const first = planStatus(undefined, 1, applied(), t0).status;
    const { status } = planStatus(
      first,
      1,
      {
        kind: "failed",
        stage: "hooks",
        reason: GitLabCoreReason.HooksFailed,
        message: "hook Job gl/x failed",
      },
      t1,
    );
    assert.equal(c(status, "Initialized")?.status, "False");
    assert.equal(c(status, "Initialized")?.reason, "HooksFailed");
    assert.equal(status.version, "10.3.0", "what was applied stays recorded");
  });

  it("a failed pass at a new generation states every condition for it, none keeping an older message", () => {
    const first = planStatus(undefined, 3, applied(), t0).status;
    const { status } = planStatus(
      first,
      4,
      { kind: "failed", stage: "render", reason: GitLabCoreReason.RenderFailed, message: "values: bad" },
      t1,
    );
    for (const type of ["Initialized", "Available", "Progressing", "Upgradeable"]) {
      assert.equal(c(status, type)?.observedGeneration, 4, `${type} is for generation 4`);
      assert.equal(c(status, type)?.message, "values: bad", `${type} says what this pass found`);
    }
  });

  it("a held upgrade: the deployed release reported as applied, the block on Progressing and Upgradeable", () => {
    const first = planStatus(undefined, 3, applied(), t0).status;
    const { status, events } = planStatus(
      first,
      4,
      applied({
        targetVersion: undefined,
        hooksRan: true,
        blocked: {
          reason: GitLabCoreReason.VersionUnresolved,
          message: "chart version 12.0.0 is in no chart source",
        },
      }),
      t1,
    );
    assert.equal(status.phase, "Failed");
    assert.equal(status.version, "10.3.0");
    assert.equal(status.targetVersion, "10.3.0", "an unresolved version leaves the recorded target");
    assert.equal(c(status, "Available")?.reason, "WorkloadsReady");
    for (const type of ["Progressing", "Upgradeable"]) {
      assert.equal(c(status, type)?.status, "False");
      assert.equal(c(status, type)?.reason, "VersionUnresolved");
      assert.match(c(status, type)!.message, /12\.0\.0/);
    }
    for (const type of ["Initialized", "Available", "Progressing", "Upgradeable"])
      assert.equal(c(status, type)?.observedGeneration, 4);
    assert.ok(events.some((e) => e.type === "Warning" && e.reason === "VersionUnresolved"));
  });

  it("hooks about to run: Progressing names the event, chart and hooks; Initialized says they run", () => {
    const { status } = planStatus(
      undefined,
      1,
      {
        kind: "hooks",
        event: "pre-install",
        chartVersion: "10.3.0",
        targetVersion: "10.3.0",
        upgrading: false,
        hooks: ["ConfigMap gl/gl-shared-secrets", "Job gl/gl-shared-secrets"],
        hookRun: { id: "1-run", event: "pre-install", chartVersion: "10.3.0", generation: 1 },
      },
      t0,
    );
    assert.equal(status.phase, "Preparing");
    assert.equal(status.targetVersion, "10.3.0");
    assert.equal(status.version, undefined);
    assert.equal(c(status, "Progressing")?.status, "True");
    assert.equal(c(status, "Progressing")?.reason, "HooksRunning");
    assert.match(
      c(status, "Progressing")!.message,
      /pre-install hooks of chart 10\.3\.0: hooks 2: .*Job gl\/gl-shared-secrets/,
    );
    // Changed on purpose (issue 44): Initialized was left unset while the hooks ran.
    assert.equal(c(status, "Initialized")?.status, "False");
    assert.equal(c(status, "Initialized")?.reason, "HooksRunning");
    assert.equal(c(status, "Initialized")?.observedGeneration, 1);
    assert.equal(c(status, "Available"), undefined, "Available waits for the pass's end");
  });

  it("an upgrade's hooks: Initialized leaves the last release's 'completed' for this generation, and a repeat pass writes nothing", () => {
    const deployed = planStatus(
      undefined,
      3,
      applied({ chartVersion: "10.2.1", targetVersion: "10.2.1" }),
      t0,
    );
    assert.equal(c(deployed.status, "Initialized")?.reason, "ChartRendered");
    const hooks: PassOutcome = {
      kind: "hooks",
      event: "pre-upgrade",
      chartVersion: "10.3.0",
      targetVersion: "10.3.0",
      upgrading: true,
      hooks: ["Job gl/gl-shared-secrets"],
      hookRun: { id: "4-run", event: "pre-upgrade", chartVersion: "10.3.0", generation: 4 },
    };
    const running = planStatus(deployed.status, 4, hooks, t1);
    assert.equal(running.status.phase, "Upgrading");
    const init = c(running.status, "Initialized")!;
    assert.equal(init.status, "False");
    assert.equal(init.reason, "HooksRunning");
    assert.equal(init.observedGeneration, 4);
    assert.match(init.message, /pre-upgrade hooks of chart 10\.3\.0/);
    assert.equal(c(running.status, "Progressing")?.observedGeneration, 4);
    assert.ok(running.events.some((e) => e.reason === "HooksRunning"));
    assert.equal(running.status.version, "10.2.1", "the deployed version stays until the apply");

    const again = planStatus(running.status, 4, hooks, new Date(t1.getTime() + 60_000));
    assert.ok(sameStatus(running.status, again.status), "a later pass of the run writes nothing");
    assert.deepEqual(again.events, []);

    // The post hooks of the same release say the objects are applied.
    const post = planStatus(running.status, 4, { ...hooks, event: "post-upgrade" }, t1);
    assert.match(c(post.status, "Initialized")!.message, /post-upgrade hooks .*objects are applied/);

    // Once they complete, the pass's end makes Initialized True for this generation.
    const done = planStatus(running.status, 4, applied(), t1);
    assert.equal(c(done.status, "Initialized")?.status, "True");
    assert.equal(c(done.status, "Initialized")?.observedGeneration, 4);
  });

  it("a Job being replaced: Progressing names it and its finalizer; the version, Available and the hook run stay", () => {
    const hookRun = {
      id: "3-run",
      event: "pre-upgrade",
      chartVersion: "10.3.0",
      generation: 3,
      succeeded: true,
    };
    const running = { ...planStatus(undefined, 3, applied(), t0).status, hookRun };
    const { status, events } = planStatus(
      running,
      3,
      {
        kind: "replacing",
        targetVersion: "10.3.0",
        upgrading: false,
        chartVersion: "10.3.0",
        renderedKinds: ["batch/v1/Job", "v1/ConfigMap"],
        objects: ["Job gl/gl-migrations (held by finalizer example.com/hold)"],
      },
      t1,
    );
    assert.equal(status.phase, "Running", "a repair, not an upgrade: the phase stays");
    assert.equal(status.version, "10.3.0");
    assert.deepEqual(status.hookRun, hookRun, "the run goes on: its hooks are not run again");
    assert.deepEqual(status.renderedKinds, ["batch/v1/Job", "v1/ConfigMap"]);
    assert.equal(c(status, "Progressing")?.status, "True");
    assert.equal(c(status, "Progressing")?.reason, "JobReplacing");
    assert.match(
      c(status, "Progressing")!.message,
      /Job gl\/gl-migrations \(held by finalizer example\.com\/hold\)/,
    );
    assert.equal(c(status, "Available")?.reason, "WorkloadsReady");
    assert.ok(events.every((e) => e.type === "Normal"));
  });

  it("stepping through minors reports Upgrading, and waiting for migrations holds Upgradeable False", () => {
    const step = planStatus(
      undefined,
      1,
      applied({ chartVersion: "10.3.4", targetVersion: "11.0.0", stepping: true }),
      t0,
    ).status;
    assert.equal(step.phase, "Upgrading");
    assert.equal(step.version, "10.3.4");
    assert.equal(c(step, "Progressing")?.status, "True");
    const waiting = planStatus(
      step,
      1,
      applied({ chartVersion: "10.3.4", targetVersion: "11.0.0", stepping: true, migrations: "running" }),
      t1,
    ).status;
    assert.equal(c(waiting, "Upgradeable")?.status, "False");
    const failed = planStatus(
      step,
      1,
      applied({ chartVersion: "10.3.4", targetVersion: "11.0.0", stepping: true, migrations: "failed" }),
      t1,
    );
    assert.equal(failed.status.phase, "Failed");
    assert.equal(c(failed.status, "Upgradeable")?.reason, "MigrationsJobFailed");
    assert.ok(failed.events.some((e) => e.type === "Warning" && e.reason === "MigrationsJobFailed"));
  });

  it("workloads not ready: Preparing, Available False naming each", () => {
    const { status } = planStatus(
      undefined,
      1,
      applied({
        workloads: { ready: [], notReady: [{ object: "StatefulSet gl/gitaly", why: "0/1 replicas ready" }] },
      }),
      t0,
    );
    assert.equal(status.phase, "Preparing");
    assert.equal(c(status, "Available")?.reason, "WorkloadsNotReady");
    assert.match(c(status, "Available")!.message, /StatefulSet gl\/gitaly: 0\/1 replicas ready/);
  });

  it("observe-only: Drifted lists what a real pass would do, and version fields stay as they were", () => {
    const { status, events } = planStatus(
      undefined,
      1,
      {
        kind: "observed",
        targetVersion: "10.3.0",
        chartVersion: "10.3.0",
        wouldHook: ["Job gl-shared-secrets"],
        wouldApply: Array.from({ length: 12 }, (_, i) => `ConfigMap gl/c${i}`),
        wouldPrune: [],
      },
      t0,
    );
    const d = c(status, "Drifted");
    assert.equal(d?.status, "True");
    assert.match(
      d!.message,
      /would run hooks 1: Job gl-shared-secrets; would apply 12: ConfigMap gl\/c0,.*c9, \.\.\.$/,
    );
    assert.equal(status.version, undefined);
    assert.equal(status.targetVersion, "10.3.0");
    assert.deepEqual(
      events.map((e) => e.reason),
      ["ObserveOnly"],
    );
    const quiet = planStatus(
      status,
      1,
      {
        kind: "observed",
        targetVersion: "10.3.0",
        chartVersion: "10.3.0",
        wouldHook: [],
        wouldApply: [],
        wouldPrune: [],
      },
      t1,
    ).status;
    assert.equal(c(quiet, "Drifted")?.status, "False");
  });
});

describe("gitlab target configuration", () => {
  it("defaults, durations, and a misspelt key refused by name", () => {
    const d = parseGitLabConfig(undefined, "targets.gitlab");
    assert.deepEqual(
      [d.concurrency, d.requeueMs, d.stepRequeueMs, d.hookTimeoutMs, d.observeOnly],
      [2, 30_000, 5_000, 600_000, false],
    );
    assert.equal(parseGitLabConfig({ requeueInterval: "1m", observeOnly: true }, "t").requeueMs, 60_000);
    assert.throws(
      () => parseGitLabConfig({ requeueinterval: "1m" }, "targets.gitlab"),
      /targets\.gitlab\.requeueinterval: unknown key \(did you mean requeueInterval\?\)/,
    );
    assert.throws(
      () => parseGitLabConfig({ concurrency: 0 }, "targets.gitlab"),
      /targets\.gitlab\.concurrency/,
    );
    assert.throws(
      () => parseGitLabConfig({ hookTimeout: "soon" }, "targets.gitlab"),
      /targets\.gitlab\.hookTimeout/,
    );
  });
});
