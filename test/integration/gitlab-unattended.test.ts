import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitLabConfigSourceLabel } from "../../src/apis/gitlabcore-names.js";
import type { KubeClient } from "../../src/runtime/client.js";
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
import { CONFIGMAP, clientFor, freshNamespace } from "../support/kube.js";

// Unattended upgrades as GitLab specifies them now (issue 44), with the fixture chart rendered by
// helm on the shared API server: charts are "released" by copying them into the operator's charts
// directory mid-test. No Job runs here: an upgrade step stays in progress while the deployed
// version's migrations Job has no status, and the test ends it by writing the Job's status.

const v = (version: string, appVersion: string) => ({ version, appVersion });
const FIRST = [v("10.3.0", "19.3.0"), v("10.4.0", "19.4.0")];
const LATER = [v("10.5.0", "19.5.0"), v("11.0.0", "20.0.0")];

/** No hooks (no kubelet runs their Jobs), no Ingress nor Gateway API: the release is its workloads and Jobs. */
const quiet = (extra: Record<string, unknown> = {}) => ({
  "shared-secrets": { enabled: false },
  upgradeCheck: { enabled: false },
  global: { ingress: { enabled: false } },
  ...extra,
});

describe("GitLabCore: unattended upgrades", () => {
  let client: KubeClient;
  let ns: string;
  let charts: { dir: string; remove(): void };
  let op: RunningGitLab | undefined;

  const core = (name: string, spec: Record<string, unknown>) =>
    applyGitLab(client, gitlabCore(ns, name, { hostname: "gitlab.example.com", ...spec }));
  const release = () => {
    const more = fixtureChartsDir(LATER);
    cpSync(join(more.dir, "gitlab"), join(charts.dir, "gitlab"), { recursive: true });
    more.remove();
  };
  const waitFor = (name: string, check: Parameters<typeof waitForGitLab>[3], what: string) =>
    waitForGitLab(client, ns, name, check, what, 120_000);

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installGitLabCrds(client, false);
    ns = await freshNamespace(client, "gl-unattended");
    charts = fixtureChartsDir(FIRST);
    op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, charts.dir, {
      requeueInterval: "2s",
      stepInterval: "1s",
      concurrency: 4,
    });
  });
  after(async () => {
    await op?.stop();
    charts?.remove();
    client?.close();
  });

  it("sets up: one instance without spec.version, one upgrading on Latest, one on a versionRef", async () => {
    // No spec.version is Latest: the API server takes the object and the newest chart is installed.
    // No migrations Job, so its upgrades never wait.
    await core("free", { chart: { values: quiet({ gitlab: { migrations: { enabled: false } } }) } });
    // Installed at 10.3.0, then on Latest: the step to 10.4.0 waits on 10.3.0's migrations Job.
    const skip = { skipBatchedMigrationCheck: true };
    await core("kept", {
      version: { type: "Static", version: "10.3.0" },
      upgrade: skip,
      chart: { values: quiet() },
    });
    await client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "gitlab-version", namespace: ns, labels: { [GitLabConfigSourceLabel]: "true" } },
        data: { chart: "10.3.0" },
      },
      { fieldManager: "platform", force: true },
    );
    await core("ref", {
      version: { type: "Static", versionRef: { kind: "ConfigMap", name: "gitlab-version", key: "chart" } },
      upgrade: skip,
      chart: { values: quiet() },
    });
    const free = await waitFor("free", (g) => g.status?.version === "10.4.0", "the newest chart installed");
    assert.equal(free.spec.version, undefined, "the operator writes no version into the spec");
    assert.equal(free.status?.availableVersion, "10.4.0");
    await waitFor("kept", (g) => g.status?.version === "10.3.0", "10.3.0 installed");
    await waitFor("ref", (g) => g.status?.version === "10.3.0", "10.3.0 installed from the ConfigMap");

    await core("kept", { version: { type: "Latest" }, upgrade: skip, chart: { values: quiet() } });
    const kept = await waitFor(
      "kept",
      (g) =>
        g.status?.targetVersion === "10.4.0" && conditionOf(g, "Progressing")?.reason === "MigrationsRunning",
      "the step to 10.4.0 waiting for 10.3.0's migrations",
    );
    assert.equal(kept.status?.version, "10.3.0");
  });

  it("a versionRef that goes missing keeps the target, the upgrade going on, with Upgradeable=False", async () => {
    await client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "gitlab-version", namespace: ns, labels: { [GitLabConfigSourceLabel]: "true" } },
        data: { chart: "10.4.0" },
      },
      { fieldManager: "platform", force: true },
    );
    await waitFor("ref", (g) => g.status?.targetVersion === "10.4.0", "the ConfigMap's 10.4.0 targeted");
    await client.delete(CONFIGMAP, "gitlab-version", ns);
    const gone = await waitFor(
      "ref",
      (g) => conditionOf(g, "Upgradeable")?.reason === "VersionUnresolved",
      "Upgradeable=False VersionUnresolved",
    );
    assert.equal(gone.status?.targetVersion, "10.4.0", "the target is kept");
    assert.match(conditionOf(gone, "Upgradeable")!.message, /ConfigMap gitlab-version not found/);

    // The step's gate opens: the upgrade goes on to the kept target though the reference is gone.
    await jobStatus(client, ns, "ref-migrations-10-3-0", { end: "Complete" });
    const done = await waitFor("ref", (g) => g.status?.version === "10.4.0", "the kept target reached");
    const upgradeable = conditionOf(done, "Upgradeable")!;
    assert.equal(upgradeable.status, "False");
    assert.equal(upgradeable.reason, "VersionUnresolved");
    assert.equal(upgradeable.observedGeneration, done.metadata.generation);
    assert.notEqual(done.status?.phase, "Failed");
  });

  it("a newer release waits for the running upgrade; a new major waits for spec.version.major", async () => {
    release(); // 10.5.0 and 11.0.0

    // The upgrade in progress keeps its target; what Latest selects now is reported beside it.
    const kept = await waitFor("kept", (g) => g.status?.availableVersion === "10.5.0", "10.5.0 seen");
    assert.equal(kept.status?.targetVersion, "10.4.0", "the running upgrade keeps its target");
    assert.equal(kept.status?.version, "10.3.0");
    // Once it completes, the newer release is the next target.
    await jobStatus(client, ns, "kept-migrations-10-3-0", { end: "Complete" });
    const next = await waitFor(
      "kept",
      (g) => g.status?.version === "10.4.0" && g.status.targetVersion === "10.5.0",
      "10.4.0 reached, 10.5.0 the next target",
    );
    assert.equal(
      conditionOf(next, "Progressing")?.reason,
      "MigrationsRunning",
      "waiting for 10.4.0's migrations",
    );

    // Without a major, Latest stays on the major the instance runs: 10.5.0, not 11.0.0.
    const free = await waitFor("free", (g) => g.status?.version === "10.5.0", "10.5.0 reached");
    const passes = op!.passes(`${ns}/free`);
    await waitFor("free", () => op!.passes(`${ns}/free`) >= passes + 3, "three more passes");
    const still = await waitFor("free", () => true, "read");
    assert.equal(still.status?.version, "10.5.0", "no major upgrade without spec.version.major");
    assert.equal(still.status?.availableVersion, "10.5.0");
    assert.equal(free.status?.targetVersion, "10.5.0");

    // The administrator sets the major: the instance moves to it.
    await core("free", {
      version: { type: "Latest", major: 11 },
      chart: { values: quiet({ gitlab: { migrations: { enabled: false } } }) },
    });
    const raised = await waitFor("free", (g) => g.status?.version === "11.0.0", "11.0.0 after major: 11");
    assert.equal(raised.status?.availableVersion, "11.0.0");
  });
});
