import {
  GitLabConfigSourceLabel,
  type GitLabCoreReasonType,
  GitLabCoreReason as R,
} from "../../../apis/gitlabcore-names.js";
import { JOB, POD } from "../../../runtime/builtin-types.js";
import { errorMessage } from "../../../runtime/errors.js";
import { proceed } from "../../../runtime/stages.js";
import type { KubeObject } from "../../../runtime/types.js";
import { releaseLabels, releaseSelector } from "../apply/plan.js";
import { provideWaitJob } from "../migrations/provide.js";
import { HOOK_ANNOTATION } from "../render/manifests.js";
import type { MigrationsRetry } from "../status/migrations.js";
import { type MigrationsJob, migrationsGate } from "../status/migrations.js";
import type { MigrationsState } from "../status/version.js";
import { BATCHED_CHECK_LABEL, TARGET_VERSION_LABEL } from "../status/version.js";
import { keptTarget, versionSpecOf } from "../version/index.js";
import {
  type Chosen,
  type FailedStage,
  type GitLabStage,
  holdUpgrade,
  isStop,
  type PassBase,
  type Resolved,
  reasonOf,
} from "./context.js";

/**
 * What the cluster serves, the chart versions there are, and the version the object resolves to
 * (a versionRef read from its ConfigMap). A discovery failure is transient: thrown, and retried
 * with the runtime's backoff. A version that cannot be had holds the upgrade only: a deployed
 * release goes on at its version (holdUpgrade).
 */
export async function resolveVersion(p: PassBase): Promise<GitLabStage<Resolved>> {
  const { deps, signal, release } = p;
  const version = versionSpecOf(p.obj.spec);
  const capabilities = await deps.release.capabilities(signal);
  const held = (stage: FailedStage, reason: GitLabCoreReasonType, message: string) => {
    const h = holdUpgrade(p, stage, reason, message);
    return isStop(h) ? h : proceed({ capabilities, ...h });
  };
  let available: string[];
  try {
    available = await deps.release.versions(signal);
  } catch (e) {
    return held("chart", reasonOf(e, R.ChartPullFailed), errorMessage(e));
  }
  // A versionRef that cannot be read (gone, unlabelled, no key, not a version) does not take the
  // target away from a resource that has one: it keeps converging to it, an upgrade in progress
  // included, and Upgradeable says why no other version can be taken (GitLab's "Version reference").
  const recorded = p.status.targetVersion;
  const refUnresolved = (message: string) =>
    recorded
      ? proceed({
          capabilities,
          blocked: undefined,
          target: recorded,
          available,
          notice: { reason: R.VersionUnresolved, message: `${message}; keeping the target ${recorded}` },
        })
      : held("version", R.VersionUnresolved, message);
  let versionRefValue: string | undefined;
  const ref = version.versionRef;
  if (ref) {
    const cm = deps.configMaps.get(`${release.namespace}/${ref.name}`);
    const data = (cm as { data?: Record<string, string> } | undefined)?.data;
    if (!cm)
      return refUnresolved(
        `spec.version.versionRef: ConfigMap ${ref.name} not found, or not labelled ${GitLabConfigSourceLabel}: "true"`,
      );
    const value = data?.[ref.key];
    if (typeof value !== "string")
      return refUnresolved(`spec.version.versionRef: ConfigMap ${ref.name} has no key ${ref.key}`);
    versionRefValue = value;
  }
  const deployed = p.status.version;
  const resolved = deps.versions.resolve({ spec: version, available, deployed, versionRefValue });
  if ("error" in resolved) {
    if (ref && resolved.reason === R.VersionUnresolved) return refUnresolved(resolved.error);
    return held("version", resolved.reason, resolved.error);
  }
  p.selected.version = resolved.version;
  const target = keptTarget({ type: version.type, selected: resolved.version, deployed, recorded });
  if (target !== resolved.version)
    p.log.debug({ target, selected: resolved.version }, "an upgrade is in progress: it keeps its target");
  return proceed({ capabilities, blocked: undefined, target, available });
}

/**
 * Which chart this pass applies: the target, or the next minor on the way to it; the deployed one
 * again while the previous step's migrations Jobs (pre-deployment, migrations, batched migrations
 * wait) run, retry or failed.
 */
export async function chooseStep(p: PassBase & Resolved): Promise<GitLabStage<Chosen>> {
  // The version stage held the upgrade: the deployed one is the step.
  if (p.blocked) return proceed({ step: p.step, upgradePass: false, blocked: p.blocked, target: p.target });
  const target = p.target;
  const deployed = p.status.version;
  let step = target;
  let migrations: MigrationsState | undefined;
  let migrationsRetry: MigrationsRetry | undefined;
  if (deployed && deployed !== target) {
    if (p.status.gitlabVersion) {
      const skipBatched = p.obj.spec.upgrade?.skipBatchedMigrationCheck === true;
      const jobs = await migrationJobs(p, p.status.gitlabVersion);
      const gate = migrationsGate(jobs, { skipBatched });
      migrations = gate.state;
      migrationsRetry = gate.retry;
      // A chart too old to render the wait Job: the operator provides one once the migrations are done.
      if (gate.state === "complete" && !skipBatched && !p.observe)
        if (await provideWaitJob(p, p.status.gitlabVersion, jobs)) migrations = "running";
    }
    if (migrations === "running" || migrations === "retrying" || migrations === "failed") step = deployed;
    else {
      const path = p.deps.versions.path(deployed, target, p.available);
      if ("error" in path) {
        const h = holdUpgrade(p, "version", path.reason, path.error);
        return isStop(h) ? h : proceed({ ...h, migrations, migrationsRetry });
      }
      step = path.steps[0] ?? target;
    }
    p.log.info({ deployed, target, migrations: migrations ?? "not checked", next: step }, "upgrade step");
  }
  return proceed({
    step,
    upgradePass: deployed !== undefined && step !== deployed,
    blocked: undefined,
    target,
    migrations,
    migrationsRetry,
  });
}

/**
 * The release's Jobs for a GitLab version (the label the chart stamps; the wait Job by its own
 * label), hooks aside: from the release's Job informer, whose watch wakes the release as they
 * progress, else listed.
 */
async function migrationJobs(p: PassBase, gitlabVersion: string): Promise<MigrationsJob[]> {
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
  const jobs = items.filter((j) => {
    const l = j.metadata.labels ?? {};
    if (j.metadata.annotations?.[HOOK_ANNOTATION] !== undefined) return false;
    const v = l[TARGET_VERSION_LABEL];
    return v === gitlabVersion || (l[BATCHED_CHECK_LABEL] !== undefined && v === undefined);
  }) as MigrationsJob[];
  return Promise.all(jobs.map((j) => withRestarts(p, j)));
}

/**
 * A `restartPolicy: OnFailure` Job still running (the real chart's migrations and wait Jobs) fails
 * no pod while it retries: its containers restart in place. Those restarts, in its pending and
 * running pods, are what the Job controller counts against backoffLimit, so they are read from the
 * pods (by the label the Job controller sets). Only while an upgrade step waits on the Job.
 */
async function withRestarts(p: PassBase, job: MigrationsJob): Promise<MigrationsJob> {
  if (job.spec?.template?.spec?.restartPolicy !== "OnFailure") return job;
  const ended = (job.status?.conditions ?? []).some(
    (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
  );
  if (ended || !job.metadata.name) return job;
  const pods = await p.deps.client.list(POD, {
    namespace: p.release.namespace,
    labelSelector: `batch.kubernetes.io/job-name=${job.metadata.name}`,
  });
  let restarts = 0;
  for (const pod of pods.items as PodLike[]) {
    const phase = pod.status?.phase;
    if (phase !== "Pending" && phase !== "Running") continue;
    for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])])
      restarts += c.restartCount ?? 0;
  }
  return restarts > 0 ? { ...job, restarts } : job;
}

type PodLike = KubeObject & {
  status?: {
    phase?: string;
    initContainerStatuses?: { restartCount?: number }[];
    containerStatuses?: { restartCount?: number }[];
  };
};
