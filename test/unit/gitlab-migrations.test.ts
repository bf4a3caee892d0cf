import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { planPreflight } from "../../src/targets/gitlab/preflight/plan.js";
import {
  type MigrationsJob,
  migrationsGate,
  retryMessage,
  roleOf,
} from "../../src/targets/gitlab/status/migrations.js";
import { planStatus } from "../../src/targets/gitlab/status/plan.js";
import { migrationsJobOf } from "../../src/targets/gitlab/status/version.js";

// The Jobs an upgrade step gates on, as GitLab's "Migrations Job failures" spec has them: three
// roles, failed only at Failed=True, a retry reported with its attempts and the command to read.

const TARGET = "gitlab.com/target-version";
const BATCHED = "gitlab.com/batched-background-migrations-check";

const job = (
  name: string,
  opts: { pre?: boolean; batched?: boolean; failed?: number; cond?: string; backoffLimit?: number } = {},
): MigrationsJob => ({
  metadata: {
    name,
    namespace: "ns",
    labels: { [TARGET]: "19.3.0", app: "migrations", ...(opts.batched ? { [BATCHED]: "true" } : {}) },
  },
  spec: {
    ...(opts.backoffLimit !== undefined ? { backoffLimit: opts.backoffLimit } : {}),
    template: {
      spec: {
        containers: [
          {
            name: opts.batched ? "wait" : "migrations",
            env: opts.pre ? [{ name: "SKIP_POST_DEPLOYMENT_MIGRATIONS", value: "true" }] : [],
          },
        ],
      },
    },
  },
  status: {
    ...(opts.failed ? { failed: opts.failed } : {}),
    ...(opts.cond ? { conditions: [{ type: opts.cond, status: "True" }] } : {}),
  },
});

describe("gitlab upgrade gates: the migrations Jobs", () => {
  it("tells the three roles apart: the wait Job by its label, the pre-deployment one by its env", () => {
    assert.equal(roleOf(job("m-pre", { pre: true })), "pre");
    assert.equal(roleOf(job("m")), "post");
    assert.equal(roleOf(job("w", { batched: true })), "batched");
  });

  it("the wait Job is never taken for the migrations Job (gitlabVersion, preflight)", () => {
    const obj = (name: string, labels: Record<string, string>) => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, labels },
      spec: { template: { spec: { containers: [{ name: "c" }] } } },
    });
    const wait = obj("gl-bbm-wait", { [TARGET]: "19.3.0", [BATCHED]: "true", app: "migrations" });
    const migrations = obj("gl-migrations", { [TARGET]: "19.3.0", app: "migrations" });
    assert.equal(migrationsJobOf([wait, migrations])?.metadata.name, "gl-migrations");
    assert.equal(migrationsJobOf([wait]), undefined);
    assert.equal(planPreflight([wait, migrations]).preMigrationsJob, "gl-migrations-pre");
    assert.equal(planPreflight([wait]).preMigrationsJob, undefined);
  });

  it("failed only at Failed=True; failed pods before that are a retry of the first Job in run order", () => {
    assert.deepEqual(migrationsGate([]), { state: "none" });
    assert.equal(migrationsGate([job("m"), job("w", { batched: true })]).state, "running");
    assert.equal(
      migrationsGate([job("m", { cond: "Complete" }), job("w", { batched: true, cond: "Complete" })]).state,
      "complete",
    );
    const retry = migrationsGate([
      job("w", { batched: true, failed: 1 }),
      job("m", { failed: 3, backoffLimit: 5 }),
      job("m-pre", { pre: true, cond: "Complete" }),
    ]);
    assert.equal(retry.state, "retrying");
    assert.deepEqual(retry.retry, {
      role: "post",
      job: "m",
      namespace: "ns",
      container: "migrations",
      failedAttempts: 3,
      limit: 6,
      backoffLimit: 5,
    });
    const failed = migrationsGate([
      job("m", { failed: 1, cond: "Complete" }),
      job("w", { batched: true, failed: 7, cond: "Failed" }),
    ]);
    assert.deepEqual(failed, { state: "failed", failed: { role: "batched", job: "w" } });
    // A Complete Job whose earlier pods failed is complete, not retrying.
    assert.equal(migrationsGate([job("m", { failed: 2, cond: "Complete" })]).state, "complete");
  });

  it("restartPolicy OnFailure (the real chart's Jobs): container restarts in place are the attempts", () => {
    const onFailure = (j: MigrationsJob, restarts: number): MigrationsJob => {
      const c = structuredClone(j);
      c.spec!.template!.spec!.restartPolicy = "OnFailure";
      c.restarts = restarts;
      return c;
    };
    assert.equal(migrationsGate([onFailure(job("w", { batched: true }), 0)]).state, "running");
    const gate = migrationsGate([onFailure(job("w", { batched: true, backoffLimit: 6 }), 2)]);
    assert.equal(gate.state, "retrying");
    // The Job controller fails an OnFailure Job once its restarts reach backoffLimit.
    assert.equal(
      retryMessage(gate.retry!),
      "the batched background migrations check Job w is retrying: failed attempt 2 of 6 (backoffLimit 6), 4 left; " +
        "see why with kubectl -n ns logs job/w -c wait --previous",
    );
    // Failed pods and restarts of the pods still running add up.
    assert.equal(migrationsGate([onFailure(job("m", { failed: 1 }), 1)]).retry?.failedAttempts, 2);
    assert.equal(migrationsGate([onFailure(job("m", { cond: "Complete" }), 3)]).state, "complete");
  });

  it("skipBatchedMigrationCheck leaves out the wait Job only", () => {
    const jobs = [job("m", { cond: "Complete" }), job("w", { batched: true, cond: "Failed" })];
    assert.equal(migrationsGate(jobs).state, "failed");
    assert.equal(migrationsGate(jobs, { skipBatched: true }).state, "complete");
    assert.equal(migrationsGate([job("m", { cond: "Failed" })], { skipBatched: true }).state, "failed");
  });

  it("a retry: Progressing True with the role's reason, attempts against the limit, the logs command", () => {
    const gate = migrationsGate([job("m-pre", { pre: true, failed: 2 })]);
    const m = retryMessage(gate.retry!);
    assert.equal(
      m,
      "the pre-deployment migrations Job m-pre is retrying: failed attempt 2 of 7 (backoffLimit 6), 5 left; " +
        "see why with kubectl -n ns logs job/m-pre -c migrations --previous",
    );
    const t = new Date("2026-12-06T10:00:00Z");
    const reasons: Record<string, string> = {};
    for (const [name, opts] of [
      ["p", { pre: true, failed: 1 }],
      ["m", { failed: 1 }],
      ["w", { batched: true, failed: 1 }],
    ] as const) {
      const g = migrationsGate([job(name, opts)]);
      const { status } = planStatus(
        { version: "10.3.0", gitlabVersion: "19.3.0" },
        2,
        {
          kind: "applied",
          targetVersion: "10.4.0",
          chartVersion: "10.3.0",
          gitlabVersion: "19.3.0",
          hooksRan: false,
          renderedKinds: [],
          workloads: { ready: [], notReady: [] },
          stepping: true,
          migrations: g.state,
          migrationsRetry: g.retry,
        },
        t,
      );
      const progressing = status.conditions?.find((c) => c.type === "Progressing");
      assert.equal(progressing?.status, "True");
      assert.equal(status.phase, "Upgrading");
      reasons[name] = progressing?.reason ?? "";
      assert.match(progressing?.message ?? "", /--previous$/);
    }
    assert.deepEqual(reasons, {
      p: "RetryingPreMigrations",
      m: "RetryingPostMigrations",
      w: "RetryingBatchedMigrationsCheck",
    });
  });
});
