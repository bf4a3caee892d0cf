import type { Rendered, RenderedObject } from "../apply/rendered.js";

/** The chart stamps the GitLab version a migrations Job brings the database to on the Job. */
export const TARGET_VERSION_LABEL = "gitlab.com/target-version";

/**
 * The label of the batched background migrations wait Job the chart renders (it shares the
 * migrations component): never taken for the migrations Job.
 */
export const BATCHED_CHECK_LABEL = "gitlab.com/batched-background-migrations-check";

/** The rendered migrations Job, if the release has one (chart 10.3 and later label it). */
export function migrationsJobOf(objects: readonly RenderedObject[]): RenderedObject | undefined {
  return objects.find(
    (o) =>
      o.apiVersion === "batch/v1" &&
      o.kind === "Job" &&
      o.metadata.labels?.[TARGET_VERSION_LABEL] &&
      o.metadata.labels[BATCHED_CHECK_LABEL] === undefined,
  );
}

/**
 * The GitLab version a render deploys: the migrations Job's label, which the chart computes (and
 * which follows a global.gitlabVersion override), else the appVersion the chart declares.
 */
export function gitlabVersionOf(render: Rendered): string | undefined {
  return migrationsJobOf(render.objects)?.metadata.labels?.[TARGET_VERSION_LABEL] ?? render.chart.appVersion;
}

/** Where an upgrade step's gating Jobs stand (see status/migrations.ts). */
export type MigrationsState = "none" | "running" | "retrying" | "complete" | "failed";

interface JobLike {
  status?: { conditions?: { type: string; status: string }[]; succeeded?: number };
}

/** What the migrations Jobs found for a GitLab version say: any failed wins, then any still running. */
export function migrationsState(jobs: readonly JobLike[]): MigrationsState {
  if (jobs.length === 0) return "none";
  const cond = (j: JobLike, t: string) =>
    j.status?.conditions?.some((c) => c.type === t && c.status === "True");
  if (jobs.some((j) => cond(j, "Failed"))) return "failed";
  if (jobs.every((j) => cond(j, "Complete"))) return "complete";
  return "running";
}
