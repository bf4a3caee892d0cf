import { GitLabCoreReason as R } from "../../../apis/gitlabcore-names.js";
import { SKIP_POST_DEPLOYMENT_MIGRATIONS } from "../preflight/plan.js";
import { BATCHED_CHECK_LABEL, type MigrationsState } from "./version.js";

/*
 * The Jobs an upgrade step gates on (GitLab's "Migrations Job failures" spec): the pre-deployment
 * migrations, the migrations (post-deployment included) and the batched background migrations wait.
 * A Job has failed only at Failed=True; before that a failed pod is an attempt the Job controller
 * retries, reported as such with what to read.
 */

export type MigrationsRole = "pre" | "post" | "batched";

export interface MigrationsJob {
  metadata: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
  };
  spec?: {
    backoffLimit?: number;
    template?: {
      spec?: {
        restartPolicy?: string;
        containers?: { name: string; env?: { name: string; value?: string }[] }[];
      };
    };
  };
  status?: { conditions?: { type: string; status: string }[]; failed?: number };
  /**
   * Not from the API: container restarts in the Job's pending and running pods (read from its
   * pods), the attempts of a `restartPolicy: OnFailure` Job, which the real chart's migrations and
   * wait Jobs are: their containers restart in place and no pod fails until the Job does.
   */
  restarts?: number;
}

/** A gating Job between a failed attempt and the next: what the Progressing message reports. */
export interface MigrationsRetry {
  role: MigrationsRole;
  job: string;
  namespace: string;
  container?: string;
  /** Failed attempts so far: failed pods, plus container restarts in place (OnFailure). */
  failedAttempts: number;
  /**
   * Failed attempts the Job controller allows: spec.backoffLimit + 1 failed pods (Never), or
   * spec.backoffLimit restarts (OnFailure: the Job fails once they reach it); backoffLimit defaults to 6.
   */
  limit: number;
  backoffLimit: number;
}

export interface MigrationsGate {
  state: MigrationsState;
  retry?: MigrationsRetry;
  /** The first Job that failed (Failed=True). */
  failed?: { role: MigrationsRole; job: string };
}

const DEFAULT_BACKOFF_LIMIT = 6;

/** Which gate a Job is: the wait Job by its label, the pre-deployment one by its env, else the migrations Job. */
export function roleOf(job: MigrationsJob): MigrationsRole {
  if (job.metadata.labels?.[BATCHED_CHECK_LABEL] !== undefined) return "batched";
  const containers = job.spec?.template?.spec?.containers ?? [];
  const pre = containers.some((c) =>
    (c.env ?? []).some((e) => e.name === SKIP_POST_DEPLOYMENT_MIGRATIONS && e.value === "true"),
  );
  return pre ? "pre" : "post";
}

const ORDER: readonly MigrationsRole[] = ["pre", "post", "batched"];
const has = (j: MigrationsJob, type: string) =>
  (j.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");

/**
 * Where the gating Jobs of one GitLab version stand, in the order they run: any Failed=True fails
 * the gate; a Job with failed pods but no Failed condition is retrying; otherwise running until
 * every one is Complete. `skipBatched` (spec.upgrade.skipBatchedMigrationCheck) leaves the wait Job out.
 */
export function migrationsGate(
  jobs: readonly MigrationsJob[],
  opts: { skipBatched?: boolean } = {},
): MigrationsGate {
  const gating = jobs
    .filter((j) => !(opts.skipBatched && roleOf(j) === "batched"))
    .sort((a, b) => ORDER.indexOf(roleOf(a)) - ORDER.indexOf(roleOf(b)));
  if (gating.length === 0) return { state: "none" };
  const failed = gating.find((j) => has(j, "Failed"));
  if (failed) return { state: "failed", failed: { role: roleOf(failed), job: failed.metadata.name ?? "" } };
  const attempts = (j: MigrationsJob) => (j.status?.failed ?? 0) + (j.restarts ?? 0);
  const retrying = gating.find((j) => !has(j, "Complete") && attempts(j) > 0);
  if (retrying) {
    const backoffLimit = retrying.spec?.backoffLimit ?? DEFAULT_BACKOFF_LIMIT;
    const inPlace = retrying.spec?.template?.spec?.restartPolicy === "OnFailure";
    return {
      state: "retrying",
      retry: {
        role: roleOf(retrying),
        job: retrying.metadata.name ?? "",
        namespace: retrying.metadata.namespace ?? "",
        container: retrying.spec?.template?.spec?.containers?.[0]?.name,
        failedAttempts: attempts(retrying),
        limit: inPlace ? Math.max(1, backoffLimit) : backoffLimit + 1,
        backoffLimit,
      },
    };
  }
  return gating.every((j) => has(j, "Complete")) ? { state: "complete" } : { state: "running" };
}

const RETRY_REASON = {
  pre: R.RetryingPreMigrations,
  post: R.RetryingPostMigrations,
  batched: R.RetryingBatchedMigrationsCheck,
} as const;

const WHAT = {
  pre: "pre-deployment migrations",
  post: "migrations",
  batched: "batched background migrations check",
} as const;

export const retryReason = (r: MigrationsRetry): (typeof RETRY_REASON)[MigrationsRole] =>
  RETRY_REASON[r.role];

/** The Progressing message of a retry: attempts against the limit, and the command that shows why. */
export function retryMessage(r: MigrationsRetry): string {
  const left = Math.max(0, r.limit - r.failedAttempts);
  const container = r.container ? ` -c ${r.container}` : "";
  return (
    `the ${WHAT[r.role]} Job ${r.job} is retrying: failed attempt ${r.failedAttempts} of ${r.limit} ` +
    `(backoffLimit ${r.backoffLimit}), ${left} left; see why with ` +
    `kubectl -n ${r.namespace} logs job/${r.job}${container} --previous`
  );
}

export const roleName = (role: MigrationsRole): string => WHAT[role];
