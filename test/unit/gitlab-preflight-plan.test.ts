import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GitLabCoreReason } from "../../src/apis/gitlabcore-names.js";
import { findCondition } from "../../src/runtime/conditions.js";
import type { RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import { planPreflight, SKIP_POST_DEPLOYMENT_MIGRATIONS } from "../../src/targets/gitlab/preflight/plan.js";
import { planStatus } from "../../src/targets/gitlab/status/plan.js";

const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  app: string,
  spec: object = {},
): RenderedObject => ({
  apiVersion,
  kind,
  metadata: { name, labels: { "app.kubernetes.io/name": app } },
  spec,
});
const pod = (env: object[] = []) => ({
  template: { spec: { containers: [{ name: "migrations", image: "busybox", env }] } },
});

describe("gitlab preflight plan", () => {
  const render: RenderedObject[] = [
    obj("v1", "ConfigMap", "gl-webservice", "webservice"),
    obj("apps/v1", "Deployment", "gl-webservice", "webservice", { replicas: 2 }),
    obj("apps/v1", "Deployment", "gl-sidekiq", "sidekiq", { replicas: 1 }),
    obj("apps/v1", "StatefulSet", "gl-gitaly", "gitaly", { replicas: 1 }),
    obj("batch/v1", "Job", "gl-migrations-10-4-0", "migrations", pod([{ name: "A", value: "1" }])),
    obj("batch/v1", "Job", "gl-shared-secrets", "shared-secrets", pod()),
  ];

  it("holds the gated Deployments paused and adds the pre-migrations Job, nothing else", () => {
    const plan = planPreflight(render);
    assert.deepEqual(plan.gated, ["Deployment gl-webservice", "Deployment gl-sidekiq"]);
    assert.equal(plan.preMigrationsJob, "gl-migrations-10-4-0-pre");
    assert.deepEqual(
      plan.objects.map((o) => `${o.kind} ${o.metadata.name}`),
      ["Deployment gl-webservice", "Deployment gl-sidekiq", "Job gl-migrations-10-4-0-pre"],
    );
    const web = plan.objects[0] as RenderedObject & { spec: { paused: boolean; replicas: number } };
    assert.equal(web.spec.paused, true);
    assert.equal(web.spec.replicas, 2, "a paused Deployment keeps its replicas: the old pods keep serving");
    const job = plan.objects[2] as RenderedObject & {
      spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
    };
    assert.deepEqual(job.spec.template.spec.containers[0]!.env, [
      { name: "A", value: "1" },
      { name: SKIP_POST_DEPLOYMENT_MIGRATIONS, value: "true" },
    ]);
    // Pure: the render is untouched.
    assert.equal((render[1] as unknown as { spec: { paused?: boolean } }).spec.paused, undefined);
    assert.equal(render[4]!.metadata.name, "gl-migrations-10-4-0");
  });

  it("holds a gated StatefulSet at zero replicas (it has no pause) and reads the chart's `app` label", () => {
    const sts: RenderedObject = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "gl-sidekiq", labels: { app: "sidekiq" } },
      spec: { replicas: 3 },
    };
    const plan = planPreflight([sts]);
    assert.deepEqual(plan.gated, ["StatefulSet gl-sidekiq"]);
    assert.equal((plan.objects[0] as unknown as { spec: { replicas: number } }).spec.replicas, 0);
  });

  it("keeps a long Job name within 63 characters, ending in -pre", () => {
    const long = `${"x".repeat(58)}-migrations`;
    const plan = planPreflight([obj("batch/v1", "Job", long.slice(0, 63), "migrations", pod())]);
    assert.ok(plan.preMigrationsJob!.length <= 63);
    assert.ok(plan.preMigrationsJob!.endsWith("-pre"));
    assert.notEqual(plan.preMigrationsJob, long.slice(0, 63));
  });

  it("a render without gated workloads or migrations has nothing to check", () => {
    assert.deepEqual(planPreflight([obj("v1", "ConfigMap", "a", "webservice")]).objects, []);
  });
});

describe("gitlab status plan: a refused preflight", () => {
  it("reports the held step on Progressing and Upgradeable; the deployed release's conditions are this generation's", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const running = planStatus(
      undefined,
      1,
      {
        kind: "applied",
        targetVersion: "10.3.4",
        chartVersion: "10.3.4",
        hooksRan: true,
        renderedKinds: [],
        workloads: { ready: ["Deployment gl/web"], notReady: [] },
        stepping: false,
      },
      now,
    ).status;
    const { status, events } = planStatus(
      running,
      2,
      {
        // The pass held the step and converged the deployed chart (its hooks due: a new generation).
        kind: "applied",
        targetVersion: "10.4.0",
        chartVersion: "10.3.4",
        hooksRan: true,
        renderedKinds: [],
        workloads: { ready: ["Deployment gl/web"], notReady: [] },
        stepping: false,
        blocked: {
          reason: GitLabCoreReason.PreflightFailed,
          message: "preflight of chart 10.4.0 refused: Deployment gl/gl-webservice: spec.replicas invalid",
        },
      },
      now,
    );
    const c = (t: string) => findCondition(status.conditions as never, t);
    assert.equal(status.version, "10.3.4", "nothing changed: the deployed version stays");
    assert.equal(status.targetVersion, "10.4.0");
    assert.equal(c("Upgradeable")?.status, "False");
    assert.equal(c("Upgradeable")?.reason, "PreflightFailed");
    assert.equal(c("Progressing")?.reason, "PreflightFailed");
    assert.equal(c("Available")?.reason, "WorkloadsReady");
    assert.equal(c("Initialized")?.status, "True");
    assert.equal(status.phase, "Failed");
    for (const t of ["Initialized", "Available", "Progressing", "Upgradeable"])
      assert.equal(c(t)?.observedGeneration, 2, `${t} speaks for generation 2`);
    assert.deepEqual(
      events.map((e) => [e.type, e.reason]),
      [["Warning", "PreflightFailed"]],
    );
  });
});
