import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { ResourceType } from "../../src/runtime/types.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  type RunningGitLab,
  waitForGitLab,
} from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { clientFor } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";

// Version changes through a versionRef ConfigMap: a change to the ConfigMap alone (no spec change)
// upgrades; a multi-minor jump steps one minor at a time, runs each chart's hooks and waits for the
// previous step's migrations Job; a version below the deployed one is refused.

const SECRET: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
const GATEWAYCLASS: ResourceType = {
  group: "gateway.networking.k8s.io",
  version: "v1",
  kind: "GatewayClass",
  plural: "gatewayclasses",
  namespaced: false,
};
const JOB: ResourceType = { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true };
const NAME = "gl";
const SA = "gitlab-manager";
const CM = "platform-versions";

describe("GitLabCore upgrades on a real cluster", () => {
  let ctx: NodeNamespace;
  let ns: string;
  let client: ReturnType<typeof clientFor>;
  let gl: FixtureGitLab | undefined;
  let op: RunningGitLab;
  const key = () => `${ns}/${NAME}`;
  const setVersion = (v: string) =>
    client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: CM, namespace: ns, labels: { "operator.gitlab.com/config-source": "true" } },
        data: { chartVersion: v },
      },
      { fieldManager: "platform-team", force: true },
    );

  before(async () => {
    ctx = await nodeNamespace("gl-upg");
    ns = ctx.namespace;
    client = clientFor(ctx.node.kubeconfigPath);
    gl = await startFixtureGitLab(client, ctx.node.kubeconfigPath, ns, { hookAccount: SA });
    op = gl.op;
  });
  after(async () => {
    await gl?.stop();
    await client?.delete(GATEWAYCLASS, `${ns}-${NAME}-gitlab`).catch(() => {});
    await deleteNamespace(ctx);
    client?.close();
  });

  it("installs the version its versionRef ConfigMap names", async () => {
    await setVersion(" 10.2.1\n");
    await applyGitLab(
      client,
      gitlabCore(ns, NAME, {
        version: { type: "Static", versionRef: { kind: "ConfigMap", name: CM, key: "chartVersion" } },
        hostname: "gitlab.example.com",
        chart: {
          values: {
            "shared-secrets": { serviceAccount: { create: false, name: SA }, rbac: { create: false } },
            global: { ingress: { enabled: false } },
            // Long enough that an upgrade step has to wait for it.
            gitlab: { migrations: { durationSeconds: 8 } },
          },
        },
      }),
    );
    const o = await waitForGitLab(client, ns, NAME, (g) => g.status?.phase === "Running", "phase Running");
    assert.equal(o.status?.version, "10.2.1");
    assert.equal(o.status?.gitlabVersion, "19.2.1", "no migrations label before 10.3: the appVersion");
  });

  it("a ConfigMap change alone steps 10.2 → 10.3 → 10.4, each chart's hooks first, each step after the last migrations", async () => {
    const generation = (await waitForGitLab(client, ns, NAME, () => true, "current")).metadata.generation;
    await setVersion("10.4.0");
    const o = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => g.status?.version === "10.4.0" && g.status.phase === "Running",
      "version 10.4.0 Running",
      600_000,
    );
    assert.equal(o.metadata.generation, generation, "the spec did not change: the ConfigMap watch woke it");
    assert.equal(o.status?.targetVersion, "10.4.0");
    assert.equal(o.status?.hooksVersion, "10.4.0");
    assert.equal(o.status?.gitlabVersion, "19.4.0");
    assert.equal(conditionOf(o, "Upgradeable")?.status, "True");

    const applied = op.lines("applied the release", key()).map((l) => l["chart"]);
    assert.deepEqual(
      applied.filter((v, i) => applied.indexOf(v) === i),
      ["10.2.1", "10.3.4", "10.4.0"],
      "one minor at a time, the newest patch of 10.3",
    );
    // Each step was dry-run first (spec 001, Preflight) with the fixture chart's real objects: its
    // webservice and sidekiq paused and its pre-migrations Job, which only the dry run ever saw.
    const preflights = op.lines("upgrade preflight passed", key());
    assert.deepEqual([...new Set(preflights.map((l) => l["chart"]))], ["10.3.4", "10.4.0"]);
    for (const p of preflights) {
      const slug = String(p["chart"]).replaceAll(".", "-");
      assert.deepEqual([...(p["accepted"] as string[])].sort(), [
        `Deployment ${ns}/gl-sidekiq`,
        `Deployment ${ns}/gl-webservice`,
        `Job ${ns}/gl-migrations-${slug}-pre`,
      ]);
      assert.ok(isNotFound(await client.get(JOB, `gl-migrations-${slug}-pre`, ns).catch((e: unknown) => e)));
    }
    // 10.3.4 carries the migrations label: before 10.4.0 the step waited for its Job to complete.
    const steps = op.lines("upgrade step", key());
    const toFinal = steps.filter((s) => s["next"] === "10.4.0");
    assert.ok(toFinal.length > 0);
    assert.equal(toFinal[0]!["migrations"], "complete", "10.4.0 was applied only after 19.3.4's migrations");
    assert.ok(
      steps.some((s) => s["migrations"] === "running" && s["next"] === "10.3.4"),
      "at least one pass found 10.3.4's migrations still running and held the step",
    );
    // Each step ran its own pre-upgrade hooks: the upgrade check twice (its script ConfigMap, then
    // the Job running it), before shared-secrets, for each chart.
    const hooks = op.lines("hook started", key()).map((l) => String(l["hook"]));
    assert.equal(hooks.filter((h) => h === `Job ${ns}/gl-upgrade-check`).length, 2);
    assert.equal(hooks.filter((h) => h === `ConfigMap ${ns}/gl-upgrade-check`).length, 2);
    assert.ok(
      hooks.indexOf(`Job ${ns}/gl-upgrade-check`) < hooks.lastIndexOf(`Job ${ns}/gl-shared-secrets`),
      "the upgrade check (-10) ran before shared-secrets (0)",
    );
    // The check's ConfigMap says before-hook-creation only: kept after the upgrade, and not pruned.
    assert.ok(await client.get(CONFIGMAP, "gl-upgrade-check", ns));
    // 10.4's shared-secrets generates the KAS secret its webservice needs; it is Running, so it ran first.
    assert.ok(await client.get(SECRET, "gl-kas-secret", ns));
    // The 10.4 chart's CustomResourceDefinition template is never applied.
    assert.ok(
      isNotFound(
        await client
          .get(CUSTOM_RESOURCE_DEFINITION, "backupschedules.backup.gitlab.com")
          .catch((e: unknown) => e),
      ),
    );
  });

  it("a version below the deployed one is refused and nothing is rolled back; the release keeps running", async () => {
    await setVersion("10.3.0");
    const o = await waitForGitLab(
      client,
      ns,
      NAME,
      (g) => g.status?.phase === "Failed",
      "the downgrade refused",
      120_000,
    );
    // The refusal holds the upgrade only (issue 42): the deployed release is still applied, so
    // Initialized (its hooks' record) stands and the refusal is on Upgradeable and Progressing.
    assert.equal(conditionOf(o, "Initialized")?.status, "True");
    const upgradeable = conditionOf(o, "Upgradeable");
    assert.equal(upgradeable?.status, "False");
    assert.equal(upgradeable?.reason, "DowngradeRefused");
    assert.match(upgradeable!.message, /10\.3\.0 is below the deployed chart version 10\.4\.0/);
    assert.equal(conditionOf(o, "Progressing")?.reason, "DowngradeRefused");
    assert.equal(o.status?.version, "10.4.0");
    assert.equal(o.status?.gitlabVersion, "19.4.0");
  });

  it("a failed migrations Job holds the next step (MigrationsJobFailed), skipBatchedMigrationCheck or not", async () => {
    const spec = (version: string, skip: boolean) => ({
      version: { type: "Static", version },
      hostname: "gitlab.example.com",
      upgrade: { skipBatchedMigrationCheck: skip },
      chart: {
        values: {
          "shared-secrets": { serviceAccount: { create: false, name: SA }, rbac: { create: false } },
          global: { ingress: { enabled: false } },
          // The fixture's migrations Job retries in place (OnFailure) as the real chart's does;
          // backoffLimit 1 makes it fail at its first restart instead of after minutes of backoff.
          gitlab: {
            migrations: { fail: true, backoffLimit: 1 },
            webservice: { enabled: false },
            sidekiq: { enabled: false },
          },
        },
      },
    });
    await applyGitLab(client, gitlabCore(ns, "gl2", spec("10.3.4", false)));
    await waitForGitLab(client, ns, "gl2", (g) => g.status?.version === "10.3.4", "10.3.4 applied");
    await applyGitLab(client, gitlabCore(ns, "gl2", spec("10.4.0", false)));
    const held = await waitForGitLab(
      client,
      ns,
      "gl2",
      (g) => conditionOf(g, "Upgradeable")?.reason === "MigrationsJobFailed",
      "the failed migrations to hold the upgrade",
    );
    assert.equal(held.status?.phase, "Failed");
    assert.equal(held.status?.version, "10.3.4", "no step past the failed migrations");
    assert.equal(held.status?.targetVersion, "10.4.0");
    assert.equal(conditionOf(held, "Upgradeable")?.status, "False");

    // Changed on purpose (issue 44): skipBatchedMigrationCheck skips the batched background
    // migrations wait only; a failed migrations Job still holds the step, for the new generation too.
    await applyGitLab(client, gitlabCore(ns, "gl2", spec("10.4.0", true)));
    const still = await waitForGitLab(
      client,
      ns,
      "gl2",
      (g) => conditionOf(g, "Upgradeable")?.reason === "MigrationsJobFailed",
      "the failed migrations to hold the step with skipBatchedMigrationCheck",
    );
    assert.equal(still.status?.version, "10.3.4");
  });

  it("a migrations attempt that fails restarts in place (OnFailure): the step reports the retry, then goes on", async () => {
    // The fixture's migrations Job as the real chart renders it (restartPolicy OnFailure, backoffLimit
    // 6): its first attempt fails, the kubelet restarts the container in the same pod, and the
    // second runs for a while and succeeds. No pod ever fails: only the restart says it retried.
    const spec = (version: string) => ({
      version: { type: "Static", version },
      hostname: "gitlab.example.com",
      chart: {
        values: {
          "shared-secrets": { serviceAccount: { create: false, name: SA }, rbac: { create: false } },
          global: { ingress: { enabled: false } },
          gitlab: {
            migrations: { failAttempts: 1, durationSeconds: 45 },
            webservice: { enabled: false },
            sidekiq: { enabled: false },
          },
        },
      },
    });
    await applyGitLab(client, gitlabCore(ns, "gl3", spec("10.3.4")));
    await waitForGitLab(client, ns, "gl3", (g) => g.status?.version === "10.3.4", "10.3.4 applied");
    await applyGitLab(client, gitlabCore(ns, "gl3", spec("10.4.0")));
    const job = "gl3-migrations-10-3-4";
    const retrying = await waitForGitLab(
      client,
      ns,
      "gl3",
      (g) => conditionOf(g, "Progressing")?.reason === "RetryingPostMigrations",
      "the migrations Job retrying in place",
    );
    assert.equal(
      conditionOf(retrying, "Progressing")!.message,
      `the migrations Job ${job} is retrying: failed attempt 1 of 6 (backoffLimit 6), 5 left; see why with kubectl -n ${ns} logs job/${job} -c migrations --previous`,
    );
    assert.equal(retrying.status?.phase, "Upgrading");
    assert.equal(retrying.status?.version, "10.3.4", "the step waits for the retry");
    const live = await client.get<{ status?: { failed?: number } } & { metadata: { name?: string } }>(
      JOB,
      job,
      ns,
    );
    assert.ok(!live.status?.failed, "no failed pod: the attempt was a container restart");

    const done = await waitForGitLab(
      client,
      ns,
      "gl3",
      (g) => g.status?.version === "10.4.0" && g.status.phase === "Running",
      "10.4.0 Running after the retried migrations",
      600_000,
    );
    assert.equal(conditionOf(done, "Upgradeable")?.status, "True");
  });
});
