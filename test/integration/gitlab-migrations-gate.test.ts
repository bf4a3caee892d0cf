import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore-names.js";
import { JOB, POD, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { Rendered, RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { jobStatus } from "../support/job-status.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// An upgrade step gates on three Jobs of the deployed GitLab version (GitLab's "Migrations Job
// failures" and "Batched background migrations" specs): the pre-deployment migrations, the
// migrations, the batched background migrations wait. No Job controller runs on the shared API
// server: the test writes each Job's status as the controller would, and the operator's Job watch
// must carry every change to the status it reports.

const TARGET = "gitlab.com/target-version";
const BATCHED = "gitlab.com/batched-background-migrations-check";
const APP = { "1.0.0": "19.0.0", "1.1.0": "19.1.0" } as const;
/** This release's Jobs restart their containers in place, as the real chart's migrations and wait Jobs do. */
const IN_PLACE = "mgr";

function renderFor(release: string, ns: string, version: "1.0.0" | "1.1.0", withWait = true): Rendered {
  const labels = (extra: Record<string, string>) => ({
    [GitLabReleaseNameLabel]: release,
    [GitLabReleaseNamespaceLabel]: ns,
    app: "migrations",
    [TARGET]: APP[version],
    ...extra,
  });
  const job = (
    name: string,
    container: string,
    extra: Record<string, string>,
    pre = false,
  ): RenderedObject => ({
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: `${release}-${name}-${version.replaceAll(".", "-")}`,
      namespace: ns,
      labels: labels(extra),
    },
    spec: {
      backoffLimit: 2,
      template: {
        spec: {
          restartPolicy: release === IN_PLACE ? "OnFailure" : "Never",
          containers: [
            {
              name: container,
              image: "busybox:1.36",
              command: ["true"],
              ...(pre ? { env: [{ name: "SKIP_POST_DEPLOYMENT_MIGRATIONS", value: "true" }] } : {}),
            },
          ],
        },
      },
    },
  });
  return {
    chart: { name: "gitlab", version, appVersion: APP[version], digest: version },
    objects: [
      job("pre", "migrations", {}, true),
      job("migrations", "migrations", {}),
      ...(withWait ? [job("bbm-wait", "wait", { [BATCHED]: "true" })] : []),
    ],
    hooks: [],
  };
}

const source = (withWait = true): ReleaseSource => ({
  capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1", "batch/v1"] }),
  versions: async () => ["1.0.0", "1.1.0"],
  render: async (req) =>
    renderFor(req.releaseName, req.namespace, req.version as "1.0.0" | "1.1.0", withWait),
});

describe("GitLabCore upgrade steps gate on the migrations Jobs", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab;
  const NAME = "mg";
  const spec = (version: string, skip = false) =>
    gitlabCore(ns, NAME, {
      version: { type: "Static", version },
      hostname: "gitlab.example.com",
      upgrade: { skipBatchedMigrationCheck: skip },
    });
  const progressing = (reason: string, what: string) =>
    waitForGitLab(client, ns, NAME, (g) => conditionOf(g, "Progressing")?.reason === reason, what, 60_000);

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-migrate");
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, () => source(), {
      requeueInterval: "2s",
      stepInterval: "1s",
    });
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("each Job holds the step; a retry says which Job, how many attempts are left, and what to read", async () => {
    await applyGitLab(client, spec("1.0.0"));
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
    await applyGitLab(client, spec("1.1.0"));
    const waiting = await progressing("MigrationsRunning", "the step waiting for 19.0.0's Jobs");
    assert.equal(waiting.status?.version, "1.0.0");
    assert.equal(waiting.status?.phase, "Upgrading");

    const pre = `${NAME}-pre-1-0-0`;
    const migrations = `${NAME}-migrations-1-0-0`;
    const wait = `${NAME}-bbm-wait-1-0-0`;
    await jobStatus(client, ns, pre, { failed: 1 });
    const o1 = await progressing("RetryingPreMigrations", "the pre-deployment migrations retrying");
    const m1 = conditionOf(o1, "Progressing")!;
    assert.equal(m1.status, "True");
    assert.equal(o1.status?.phase, "Upgrading");
    assert.match(
      m1.message,
      new RegExp(`Job ${pre} is retrying: failed attempt 1 of 3 \\(backoffLimit 2\\), 2 left`),
    );
    assert.match(m1.message, new RegExp(`kubectl -n ${ns} logs job/${pre} -c migrations --previous$`));
    assert.equal(conditionOf(o1, "Upgradeable")?.status, "False");

    await jobStatus(client, ns, pre, { failed: 1, end: "Complete" });
    await jobStatus(client, ns, migrations, { failed: 2 });
    const o2 = await progressing("RetryingPostMigrations", "the migrations retrying");
    assert.match(conditionOf(o2, "Progressing")!.message, /failed attempt 2 of 3 .*, 1 left/);

    await jobStatus(client, ns, migrations, { failed: 2, end: "Complete" });
    await jobStatus(client, ns, wait, { failed: 1 });
    const o3 = await progressing("RetryingBatchedMigrationsCheck", "the batched migrations check retrying");
    assert.match(conditionOf(o3, "Progressing")!.message, new RegExp(`logs job/${wait} -c wait --previous`));
    assert.equal(o3.status?.version, "1.0.0", "still no step");

    // Failed=True ends it: the step is held as failed, the deployed version kept.
    await jobStatus(client, ns, wait, { failed: 3, end: "Failed" });
    const failed = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Upgradeable")?.reason === "MigrationsJobFailed",
      "MigrationsJobFailed",
      60_000,
    );
    assert.equal(failed.status?.phase, "Failed");
    assert.equal(failed.status?.version, "1.0.0");

    // skipBatchedMigrationCheck leaves out the wait Job only: the other two completed, so the step goes.
    await applyGitLab(client, spec("1.1.0", true));
    const moved = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => g.status?.version === "1.1.0",
      "1.1.0 applied",
      60_000,
    );
    assert.equal(moved.status?.gitlabVersion, "19.1.0", "read off the migrations Job, not the wait Job");
  });

  it("restartPolicy OnFailure, as the real chart's Jobs: containers restarted in place are the failed attempts", async () => {
    const core = (version: string) =>
      gitlabCore(ns, IN_PLACE, { version: { type: "Static", version }, hostname: "gitlab.example.com" });
    await applyGitLab(client, core("1.0.0"));
    await waitForGitLab(client, ns, IN_PLACE, (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
    await applyGitLab(client, core("1.1.0"));
    await waitForGitLab(
      client,
      ns,
      IN_PLACE,
      (g) => conditionOf(g, "Progressing")?.reason === "MigrationsRunning",
      "the step waiting for 19.0.0's Jobs",
      60_000,
    );
    // The Job controller's pod of the migrations Job: running, its container restarted once (no
    // failed pod: the Job's status says nothing of it).
    const job = `${IN_PLACE}-migrations-1-0-0`;
    const pod = `${job}-x1`;
    // No ServiceAccount controller here: the staged pod needs the namespace's default account.
    await client.apply(
      SERVICE_ACCOUNT,
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: ns } },
      { fieldManager: "test-setup", force: true },
    );
    await client.create<KubeObject>(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: pod,
        namespace: ns,
        labels: { "batch.kubernetes.io/job-name": job, "job-name": job },
      },
      spec: { restartPolicy: "OnFailure", containers: [{ name: "migrations", image: "busybox:1.36" }] },
    });
    const restarted = (restartCount: number) => ({
      status: {
        phase: "Running",
        containerStatuses: [
          {
            name: "migrations",
            image: "busybox:1.36",
            imageID: "",
            ready: true,
            restartCount,
            state: { running: { startedAt: new Date().toISOString().replace(/\.\d+Z$/, "Z") } },
          },
        ],
      },
    });
    await client.mergePatch(POD, pod, ns, restarted(1), "status");
    const o = await waitForGitLab(
      client,
      ns,
      IN_PLACE,
      (g) => conditionOf(g, "Progressing")?.reason === "RetryingPostMigrations",
      "the migrations retrying in place",
      60_000,
    );
    // OnFailure: the Job fails once its restarts reach backoffLimit (2 here).
    assert.match(
      conditionOf(o, "Progressing")!.message,
      new RegExp(
        `Job ${job} is retrying: failed attempt 1 of 2 \\(backoffLimit 2\\), 1 left; see why with kubectl -n ${ns} logs job/${job} -c migrations --previous$`,
      ),
    );
    assert.equal(o.status?.phase, "Upgrading");
    assert.equal(o.status?.version, "1.0.0");
    await client.delete(GITLABCORE, IN_PLACE, ns);
  });
});

describe("a chart too old to render the wait Job: the operator provides one", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab;
  const spec = (name: string, version: string, skip = false) =>
    gitlabCore(ns, name, {
      version: { type: "Static", version },
      hostname: "gitlab.example.com",
      upgrade: { skipBatchedMigrationCheck: skip },
    });
  const jobs = async () =>
    (await client.list<KubeObject>(JOB, { namespace: ns })).items.map((j) => j.metadata.name);

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-oldwait");
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, () => source(false), {
      requeueInterval: "2s",
      stepInterval: "1s",
    });
  });
  after(async () => {
    await op?.stop();
    client?.close();
  });

  it("created once the migrations are done, derived from the migrations Job; the step waits on it and it is never pruned", async () => {
    const NAME = "ow";
    await applyGitLab(client, spec(NAME, "1.0.0"));
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
    await applyGitLab(client, spec(NAME, "1.1.0"));
    await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Progressing")?.reason === "MigrationsRunning",
      "the step waiting for 19.0.0's Jobs",
      60_000,
    );
    const wait = `${NAME}-bbm-wait-19-0-0`;
    assert.ok(!(await jobs()).includes(wait), "no wait Job while the migrations run");
    await jobStatus(client, ns, `${NAME}-pre-1-0-0`, { end: "Complete" });
    await jobStatus(client, ns, `${NAME}-migrations-1-0-0`, { end: "Complete" });
    const job = await eventually(
      () =>
        client.getOrUndefined<
          KubeObject & { spec: { template: { spec: { containers: { image?: string; args: string[] }[] } } } }
        >(JOB, wait, ns),
      60_000,
      "the operator's wait Job",
    );
    const core = await client.get<KubeObject>(GITLABCORE, NAME, ns);
    assert.deepEqual(
      job.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [["GitLabCore", NAME, core.metadata.uid, true]],
    );
    assert.equal(job.metadata.labels?.[BATCHED], "operator");
    assert.equal(job.metadata.labels?.[TARGET], "19.0.0");
    assert.equal(job.metadata.labels?.[GitLabReleaseNameLabel], NAME);
    const container = job.spec.template.spec.containers[0];
    assert.equal(container.image, "busybox:1.36", "the migrations Job's pod");
    assert.deepEqual(container.args?.slice(0, 2), ["/bin/bash", "-c"]);
    assert.match(container.args[2], /BatchedMigration/);
    const managed = (job.metadata.managedFields ?? []) as { operation?: string; subresource?: string }[];
    assert.ok(managed.length > 0);
    assert.deepEqual(
      managed.filter((m) => m.operation === "Apply" && !m.subresource),
      [],
      "created, never sent through the release's server-side apply",
    );
    const held = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Progressing")?.reason === "MigrationsRunning",
      "held by the wait Job",
      60_000,
    );
    assert.equal(held.status?.version, "1.0.0");

    await jobStatus(client, ns, wait, { failed: 1 });
    const retrying = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => conditionOf(g, "Progressing")?.reason === "RetryingBatchedMigrationsCheck",
      "the operator's wait Job retrying",
      60_000,
    );
    assert.match(conditionOf(retrying, "Progressing")!.message, new RegExp(`Job ${wait} is retrying`));

    await jobStatus(client, ns, wait, { failed: 1, end: "Complete" });
    const moved = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => g.status?.version === "1.1.0",
      "1.1.0 applied",
      60_000,
    );
    assert.equal(moved.status?.gitlabVersion, "19.1.0", "read off the migrations Job, not the wait Job");
    // 1.1.0's render pruned what 1.0.0 rendered and it does not; the operator's Job is no rendered object.
    // Prune (after 1.1.0 applied) removes what 1.0.0 rendered and 1.1.0 does not: the operator's
    // Job is no rendered object, so it stays.
    const left = await eventually(
      async () => {
        const names = await jobs();
        return names.includes(`${NAME}-migrations-1-0-0`) ? undefined : names;
      },
      60_000,
      "1.0.0's migrations Job pruned",
    );
    assert.ok(left.includes(wait), `the wait Job stays: ${left.join(", ")}`);
  });

  it("skipBatchedMigrationCheck: no wait Job, the step goes once the migrations are done", async () => {
    const NAME = "os";
    await applyGitLab(client, spec(NAME, "1.0.0", true));
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "1.0.0", "1.0.0 applied", 60_000);
    await applyGitLab(client, spec(NAME, "1.1.0", true));
    await jobStatus(client, ns, `${NAME}-pre-1-0-0`, { end: "Complete" });
    await jobStatus(client, ns, `${NAME}-migrations-1-0-0`, { end: "Complete" });
    await waitForGitLab(client, ns, NAME, (g) => g.status?.version === "1.1.0", "1.1.0 applied", 60_000);
    assert.ok(!(await jobs()).some((n) => n?.startsWith(`${NAME}-bbm-wait`)));
  });
});
