import { GitLabConfigSourceLabel, GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { JOB } from "../../../runtime/builtin-types.js";
import { errorMessage } from "../../../runtime/errors.js";
import type { KubeObject } from "../../../runtime/types.js";
import { releaseLabels, releaseSelector } from "../apply/plan.js";
import { provideWaitJob } from "../migrations/provide.js";
import { HOOK_ANNOTATION } from "../render/manifests.js";
import { type MigrationsJob, migrationsGate } from "../status/migrations.js";
import { BATCHED_CHECK_LABEL, TARGET_VERSION_LABEL } from "../status/version.js";
import { holdUpgrade, type PassState, reasonOf, type Stage } from "./context.js";

/**
 * What the cluster serves, the chart versions there are, and the version the object resolves to
 * (a versionRef read from its ConfigMap). A discovery failure is transient: thrown, and retried
 * with the runtime's backoff. A version that cannot be had holds the upgrade only: a deployed
 * release goes on at its version (holdUpgrade).
 */
export const resolveVersion: Stage = {
  name: "version",
  async run(p) {
    const { deps, signal, release } = p;
    const spec = p.obj.spec;
    p.capabilities = await deps.release.capabilities(signal);
    try {
      p.available = await deps.release.versions(signal);
    } catch (e) {
      return holdUpgrade(p, "chart", reasonOf(e, R.ChartPullFailed), errorMessage(e));
    }
    let versionRefValue: string | undefined;
    const ref = spec.version.versionRef;
    if (ref) {
      const cm = deps.configMaps.get(`${release.namespace}/${ref.name}`);
      const data = (cm as { data?: Record<string, string> } | undefined)?.data;
      if (!cm)
        return holdUpgrade(
          p,
          "version",
          R.VersionUnresolved,
          `spec.version.versionRef: ConfigMap ${ref.name} not found, or not labelled ${GitLabConfigSourceLabel}: "true"`,
        );
      if (typeof data?.[ref.key] !== "string")
        return holdUpgrade(
          p,
          "version",
          R.VersionUnresolved,
          `spec.version.versionRef: ConfigMap ${ref.name} has no key ${ref.key}`,
        );
      versionRefValue = data[ref.key];
    }
    const resolved = deps.versions.resolve({
      spec: spec.version,
      available: p.available,
      deployed: p.status.version,
      versionRefValue,
    });
    if ("error" in resolved) return holdUpgrade(p, "version", resolved.reason, resolved.error);
    p.target = resolved.version;
    return undefined;
  },
};

/**
 * Which chart this pass applies: the target, or the next minor on the way to it; the deployed one
 * again while the previous step's migrations Jobs (pre-deployment, migrations, batched migrations
 * wait) run, retry or failed.
 */
export const chooseStep: Stage = {
  name: "step",
  async run(p) {
    if (p.blocked) return undefined; // the version stage held the upgrade: the deployed one is the step
    const target = p.target!;
    const deployed = p.status.version;
    p.step = target;
    if (deployed && deployed !== target) {
      if (p.status.gitlabVersion) {
        const skipBatched = p.obj.spec.upgrade?.skipBatchedMigrationCheck === true;
        const jobs = await migrationJobs(p, p.status.gitlabVersion);
        const gate = migrationsGate(jobs, { skipBatched });
        p.migrations = gate.state;
        p.migrationsRetry = gate.retry;
        // A chart too old to render the wait Job: the operator provides one once the migrations are done.
        if (gate.state === "complete" && !skipBatched && !p.observe)
          if (await provideWaitJob(p, p.status.gitlabVersion, jobs)) p.migrations = "running";
      }
      if (p.migrations === "running" || p.migrations === "retrying" || p.migrations === "failed")
        p.step = deployed;
      else {
        const path = p.deps.versions.path(deployed, target, p.available!);
        if ("error" in path) return holdUpgrade(p, "version", path.reason, path.error);
        p.step = path.steps[0] ?? target;
      }
      p.log.info(
        { deployed, target, migrations: p.migrations ?? "not checked", next: p.step },
        "upgrade step",
      );
    }
    p.upgradePass = deployed !== undefined && p.step !== deployed;
    return undefined;
  },
};

/**
 * The release's Jobs for a GitLab version (the label the chart stamps; the wait Job by its own
 * label), hooks aside: from the release's Job informer, whose watch wakes the release as they
 * progress, else listed.
 */
async function migrationJobs(p: PassState, gitlabVersion: string): Promise<MigrationsJob[]> {
  const cache = p.deps.live ? await p.deps.live(JOB) : undefined;
  const labels = releaseLabels(p.release);
  const items: KubeObject[] = cache
    ? cache
        .list(p.release.namespace)
        .filter((j) => Object.entries(labels).every(([k, v]) => j.metadata.labels?.[k] === v))
    : (
        await p.deps.client.list(JOB, {
          namespace: p.release.namespace,
          labelSelector: releaseSelector(p.release),
        })
      ).items;
  return items.filter((j) => {
    const l = j.metadata.labels ?? {};
    if (j.metadata.annotations?.[HOOK_ANNOTATION] !== undefined) return false;
    const v = l[TARGET_VERSION_LABEL];
    return v === gitlabVersion || (l[BATCHED_CHECK_LABEL] !== undefined && v === undefined);
  }) as MigrationsJob[];
}
