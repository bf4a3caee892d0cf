import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import { splitWaitJobs } from "../../src/targets/gitlab/migrations/chart-wait-job.js";
import { withWaitJob } from "../../src/targets/gitlab/values/overrides.js";

// The chart's batched background migrations wait Job: its value on for upgrade steps only, and the
// Job kept out of the generic apply.

const BATCHED = "gitlab.com/batched-background-migrations-check";
const enabledIn = (values: unknown) =>
  (values as { gitlab?: { migrations?: { batchedBackgroundMigrationsCheck?: { enabled?: unknown } } } })
    .gitlab?.migrations?.batchedBackgroundMigrationsCheck?.enabled;

describe("gitlab: the chart's wait Job", () => {
  it("is turned on for an upgrade step and off over any layer's value otherwise, the input unchanged", () => {
    const values = { gitlab: { migrations: { durationSeconds: 3 }, webservice: { replicas: 2 } } };
    const on = withWaitJob(values, true) as typeof values;
    assert.equal(enabledIn(on), true);
    assert.equal(on.gitlab.migrations.durationSeconds, 3, "siblings kept");
    assert.equal(on.gitlab.webservice.replicas, 2);
    assert.equal(enabledIn(values), undefined, "the input is not changed");

    const userOn = { gitlab: { migrations: { batchedBackgroundMigrationsCheck: { enabled: true } } } };
    assert.equal(
      enabledIn(withWaitJob(userOn, false)),
      false,
      "off outside an upgrade, whatever a layer says",
    );
    assert.equal(enabledIn(userOn), true);
    // Set nowhere and off: the values are passed as they are (a chart without the key never sees it).
    assert.equal(withWaitJob(values, false), values);
  });

  it("is split from the apply plan by its label; other Jobs stay", () => {
    const job = (name: string, labels: Record<string, string>): RenderedObject => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, labels },
    });
    const plan = {
      objects: [
        job("gl-migrations-10-4-0", { app: "migrations" }),
        job("gl-migrations-bbm-10-4-0", { [BATCHED]: "true" }),
      ],
      excluded: [],
    };
    const split = splitWaitJobs(plan);
    assert.deepEqual(
      split.plan.objects.map((o) => o.metadata.name),
      ["gl-migrations-10-4-0"],
    );
    assert.deepEqual(
      split.waitJobs.map((o) => o.metadata.name),
      ["gl-migrations-bbm-10-4-0"],
    );
  });
});
