import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  applyGitLab,
  conditionOf,
  fixtureChartsDir,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { jobStatus } from "../support/job-status.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// The chart's own batched background migrations wait Job (GitLab's "Batched background
// migrations" spec, and the chart value GitLab's operator turns on only while upgrading), with the
// fixture chart rendered by helm on the shared API server: the fixture renders the Job from 10.4.0
// on, so 10.3.0 is a chart too old to render one. No Job controller runs: the test writes the
// Jobs' status.

const BATCHED = "gitlab.com/batched-background-migrations-check";
const CHARTS = [
  { version: "10.3.0", appVersion: "19.3.0" },
  { version: "10.4.0", appVersion: "19.4.0" },
  { version: "10.5.0", appVersion: "19.5.0" },
];
const NAME = "gl";

describe("GitLabCore: the chart's batched migrations wait Job, during upgrades only", () => {
  let client: KubeClient;
  let ns: string;
  let charts: { dir: string; remove(): void };
  let op: RunningGitLab | undefined;

  const setVersion = (version: string) =>
    applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", version },
        hostname: "gitlab.example.com",
        chart: {
          values: {
            "shared-secrets": { enabled: false },
            upgradeCheck: { enabled: false },
            global: { ingress: { enabled: false } },
            // A user's value does not turn it on outside an upgrade step.
            gitlab: { migrations: { batchedBackgroundMigrationsCheck: { enabled: true } } },
          },
        },
      }),
    );
  const waitJobs = async () =>
    (await client.list<KubeObject>(JOB, { namespace: ns })).items.filter(
      (j) => j.metadata.labels?.[BATCHED] !== undefined,
    );
  const progressing = (reason: string, what: string) =>
    waitForGitLab(client, ns, NAME, (g) => conditionOf(g, "Progressing")?.reason === reason, what, 120_000);

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-chart-wait");
    charts = fixtureChartsDir(CHARTS);
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, charts.dir, {
      requeueInterval: "2s",
      stepInterval: "1s",
    });
  });
  after(async () => {
    await op?.stop();
    charts?.remove();
    client?.close();
  });

  it("an install renders none; an upgrade step creates it, owned and not applied; its gate waits on it; prune keeps it", async () => {
    await setVersion("10.3.0");
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "10.3.0", "10.3.0 installed", 120_000);
    assert.deepEqual(await waitJobs(), [], "an install runs no wait Job");

    // 10.3.0 → 10.4.0 → 10.5.0. 10.3.0 renders no wait Job: the operator provides one.
    await setVersion("10.5.0");
    await progressing("MigrationsRunning", "the first step waiting for 10.3.0's migrations");
    await jobStatus(client, ns, `${NAME}-migrations-10-3-0`, { end: "Complete" });
    const provided = await eventually(
      async () => (await waitJobs()).find((j) => j.metadata.labels?.[BATCHED] === "operator"),
      60_000,
      "the operator's wait Job for 10.3.0",
    );
    await jobStatus(client, ns, provided.metadata.name!, { end: "Complete" });

    // The step to 10.4.0 renders the chart's wait Job: created with a plain create, owned.
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "10.4.0", "10.4.0 applied", 120_000);
    const chartJob = `${NAME}-migrations-bbm-10-4-0`;
    const job = await eventually(
      async () => client.getOrUndefined<KubeObject>(JOB, chartJob, ns),
      60_000,
      `the chart's wait Job ${chartJob}`,
    );
    assert.equal(job.metadata.labels?.[BATCHED], "true");
    assert.equal(job.metadata.labels?.["gitlab.com/target-version"], "19.4.0");
    assert.equal(job.metadata.ownerReferences?.[0]?.kind, "GitLabCore");
    assert.equal(job.metadata.ownerReferences?.[0]?.controller, true);
    const ops = ((job.metadata.managedFields ?? []) as { operation?: string }[]).map((m) => m.operation);
    assert.ok(
      !ops.includes("Apply"),
      `created, never server-side applied (managedFields: ${ops.join(", ")})`,
    );

    // 10.4.0's gate: its migrations done, the chart's Job is the wait; the operator provides none.
    await jobStatus(client, ns, `${NAME}-migrations-10-4-0`, { end: "Complete" });
    await jobStatus(client, ns, chartJob, { failed: 1 });
    const retrying = await progressing("RetryingBatchedMigrationsCheck", "the chart's wait Job retrying");
    assert.match(conditionOf(retrying, "Progressing")!.message, new RegExp(`Job ${chartJob} is retrying`));
    assert.equal(retrying.status?.version, "10.4.0", "the step waits");
    assert.deepEqual(
      (await waitJobs()).map((j) => j.metadata.name).sort(),
      [provided.metadata.name, chartJob].sort(),
      "no wait Job provided where the chart renders one",
    );

    await jobStatus(client, ns, chartJob, { failed: 1, end: "Complete" });
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "10.5.0", "10.5.0 applied", 120_000);
    // Passes over 10.4.0 rendered no wait Job, and the one created stays: prune never takes it.
    assert.ok(await client.getOrUndefined<KubeObject>(JOB, chartJob, ns), "the chart's wait Job is kept");
  });
});
