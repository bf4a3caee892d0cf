import { createHash } from "node:crypto";
import { Cron } from "croner";
import { isoTime } from "../../../../runtime/utc-time.js";

/**
 * When a backup is due. Pure: the caller passes the time, so tests move the clock instead of
 * waiting for it.
 *
 * Windows: a schedule's run times are windows. At most one attempt per window: the window an attempt
 * served is persisted in status.backup.lastAttemptScheduledTime and the Job's name derives from it, so
 * a pass repeated after an operator restart finds the same Job instead of launching a second one.
 * When windows were missed (operator down, lock held), only the newest is run, once — like a CronJob
 * without a starting deadline, and never a burst of catch-up backups.
 *
 * Manual trigger: openbao.org/trigger-backup carries an opaque token (by convention the time it was
 * set, e.g. `date -u +%Y-%m-%dT%H:%M:%SZ`, or "now"). Each new value asks for one backup; the value
 * acted on is kept in status.backup.lastHandledManualTrigger, so setting the same value again, or the
 * operator restarting, asks for nothing. A manual backup also serves the window it runs in: a
 * scheduled window already due is not run a second time right after it.
 */

export class ScheduleError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * Parses a standard five-field cron expression (minute hour day-of-month month day-of-week) or one of
 * the @hourly/@daily/@weekly/@monthly/@yearly shorthands, evaluated in UTC, with day-of-month and
 * day-of-week combined by OR as in Vixie cron and the Go cron library upstream uses.
 */
export function parseSchedule(expr: string, field = "spec.backup.schedule"): Cron {
  const trimmed = expr.trim();
  if (trimmed === "") throw new ScheduleError(field, 'is empty; give a cron expression such as "0 3 * * *"');
  try {
    return new Cron(trimmed, { paused: true, timezone: "UTC", mode: "5-part", domAndDow: false });
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^CronPattern: /, "") : String(e);
    throw new ScheduleError(field, `is not a five-field cron expression (${why})`);
  }
}

/** Newest run time at or before `now`, if any. */
export function latestWindow(cron: Cron, now: Date): Date | undefined {
  // previousRuns excludes the reference instant; run times are whole seconds, so one second past the
  // floor of `now` includes a window that falls exactly on it and nothing later.
  const ref = new Date(Math.floor(now.getTime() / 1000) * 1000 + 1000);
  return cron.previousRuns(1, ref)[0];
}

export function nextWindow(cron: Cron, now: Date): Date | undefined {
  return cron.nextRun(now) ?? undefined;
}

export interface ScheduleInput {
  schedule: string;
  now: Date;
  /** status.backup.lastAttemptScheduledTime. */
  lastAttemptScheduledTime?: string;
  /** The cluster's creationTimestamp: windows before it never count as missed. */
  createdAt?: string;
  /** Value of the trigger annotation, if set. */
  trigger?: string;
  /** status.backup.lastHandledManualTrigger. */
  lastHandledTrigger?: string;
}

export type Due = { kind: "scheduled"; window: Date } | { kind: "manual"; window: Date; trigger: string };

export interface ScheduleDecision {
  due?: Due;
  /** The next window after now: status.backup.nextScheduledBackup and the requeue time. */
  next?: Date;
}

export function decide(input: ScheduleInput): ScheduleDecision {
  const cron = parseSchedule(input.schedule);
  const next = nextWindow(cron, input.now);
  const trigger = input.trigger?.trim();
  if (trigger && trigger !== input.lastHandledTrigger)
    return { due: { kind: "manual", window: wholeSecond(input.now), trigger }, next };
  const latest = latestWindow(cron, input.now);
  if (!latest) return { next };
  const floor = parseTime(input.lastAttemptScheduledTime) ?? parseTime(input.createdAt);
  if (floor !== undefined && latest.getTime() <= floor) return { next };
  return { due: { kind: "scheduled", window: latest }, next };
}

function parseTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

function wholeSecond(d: Date): Date {
  return new Date(Math.floor(d.getTime() / 1000) * 1000);
}

export function shortHash(s: string, n = 8): string {
  return createHash("sha256").update(s).digest("hex").slice(0, n);
}

/** Job names become a pod label value: at most 63 characters. */
const MAX_JOB_NAME = 63;

/** `20261201-030000`: upstream's UTC stamp in a backup Job's name. */
function jobTime(d: Date): string {
  const iso = isoTime(d);
  return `${iso.slice(0, 10).replace(/-/g, "")}-${iso.slice(11, 19).replace(/:/g, "")}`;
}

/**
 * The Job of one attempt, under upstream's `backup-<cluster>-<UTC yyyymmdd-hhmmss>` (the window's
 * time). Deterministic, so the same window or trigger always maps to the same Job and a second
 * create answers AlreadyExists; a manual trigger's value is user text, so it enters the name only as
 * a hash (`backup-<cluster>-manual-<hash>`).
 */
export function backupJobName(cluster: string, due: Due): string {
  const suffix = due.kind === "scheduled" ? jobTime(due.window) : `manual-${shortHash(due.trigger)}`;
  const full = `backup-${cluster}-${suffix}`;
  if (full.length <= MAX_JOB_NAME) return full;
  // Keep the suffix whole; shorten the cluster part and make it unique again with a hash.
  const room = MAX_JOB_NAME - "backup-".length - suffix.length - 8;
  return `backup-${cluster.slice(0, room).replace(/-+$/, "")}-${shortHash(cluster, 6)}-${suffix}`;
}

/** Which kind of attempt a backup Job is, from the name backupJobName gave it. */
export function backupTypeOfJob(jobName: string): "scheduled" | "manual" {
  return /-manual-[0-9a-f]{8}$/.test(jobName) ? "manual" : "scheduled";
}

/** The folder retention lists: every key backupObjectKey makes for this cluster starts with it. */
export function backupKeyPrefix(pathPrefix: string | undefined, namespace: string, cluster: string): string {
  const prefix = (pathPrefix ?? "").replace(/^\/+|\/+$/g, "");
  return prefix ? `${prefix}/${namespace}/${cluster}/` : `${namespace}/${cluster}/`;
}
