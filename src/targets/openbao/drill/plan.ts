import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import { OpenBaoRestoreReason } from "../../../apis/openbaorestore-names.js";
import { isoSeconds } from "../../../runtime/utc-time.js";
import type { BackupStatus } from "../adminops/backup/result.js";
import { latestWindow, nextWindow, parseSchedule, ScheduleError } from "../adminops/backup/schedule.js";
import { parseDurationMs } from "../workload/certs/duration.js";

/**
 * The restore test's decisions. Pure: the reconciler observes (the source, its throwaway cluster,
 * the OpenBaoRestore into it, a probe of the restored pod) and acts on what this returns.
 *
 * One run: a throwaway one-pod cluster is created beside the source with the source's seal; once it
 * is initialized, an OpenBaoRestore restores the latest backup into it (the restore controller does
 * the restore, lock and Job included); once that completed, the restored pod must answer unsealed
 * and the canary path must read back. The outcome is recorded on the source's status.backup, then
 * the throwaway goes, volumes included. The throwaway is the run's only state: its annotations say
 * which key and window it serves, so a restarted operator continues the same run.
 */

export const DEFAULT_TIMEOUT_MS = 30 * 60_000;
/** Re-check period while the throwaway forms or the restore runs (their changes also wake the pass). */
export const POLL_MS = 15_000;
/**
 * How long the restored pod may answer sealed, or without the canary, after the restore completed
 * (the restore restarts the pod; it must come back and unseal) before the run fails for it.
 */
export const PROBE_GRACE_MS = 3 * 60_000;

export type RestoreTestSpec = NonNullable<NonNullable<OpenBaoCluster["spec"]["backup"]>["restoreTest"]>;

/** The run a throwaway serves, from its annotations. */
export interface Run {
  key: string;
  /** RFC 3339 schedule window; "" in per-backup mode. */
  window: string;
  startedAt: Date;
}

export interface ThrowawayView {
  run: Run | undefined;
  deleting: boolean;
  /** status.initialized of the throwaway. */
  initialized: boolean;
}

export interface RestoreView {
  phase: string;
  /** status.completionTime. */
  completedAt?: Date;
  /** RestoreComplete's message ("Reason: detail") or status.message, when Failed. */
  message?: string;
  /** The restore's own failure reason (the "Reason" of that message), when Failed. */
  failureReason?: string;
}

export type Probe =
  | { kind: "sealed"; message: string }
  | { kind: "canary-missing"; message: string }
  | { kind: "ok" };

export interface Observed {
  source: OpenBaoCluster;
  now: Date;
  throwaway?: ThrowawayView;
  restore?: RestoreView;
  /** Volumes (PVCs) of the throwaway still present. */
  claims: number;
}

export type Outcome =
  | { passed: true; key: string; window: string }
  | { passed: false; key: string; window: string; reason: OpenBaoClusterReasonType; message: string };

export type Plan =
  /** Nothing to do; come back after requeueMs (undefined: only an event wakes it). */
  | { kind: "idle"; requeueMs?: number; invalid?: { message: string } }
  | { kind: "start"; run: Omit<Run, "startedAt"> }
  /** Waiting on the throwaway or the restore; `why` for the log. */
  | { kind: "wait"; why: string; requeueMs: number }
  | { kind: "create-restore"; run: Run }
  /** The restore completed: probe the restored pod, then judge(). */
  | { kind: "probe"; run: Run }
  | { kind: "record"; outcome: Outcome }
  /** A run recorded (or abandoned): delete the restore, the throwaway and its volumes. */
  | { kind: "cleanup" };

const stamp = (d: Date) => isoSeconds(d);

/** The test's timeout in ms; bad input names the field. */
export function timeoutMs(spec: RestoreTestSpec): number {
  return spec.timeout ? parseDurationMs(spec.timeout, "spec.backup.restoreTest.timeout") : DEFAULT_TIMEOUT_MS;
}

/** Whether restore tests are asked for on this cluster. */
export function enabled(c: OpenBaoCluster): RestoreTestSpec | undefined {
  const t = c.spec.backup?.restoreTest;
  return t && t.enabled !== false ? t : undefined;
}

export type Due =
  | { due: true; run: Omit<Run, "startedAt"> }
  | { due: false; requeueMs?: number; why: string };

/**
 * When a run is due. Without a schedule: once per new backup (status.backup.lastBackupKey differs
 * from the key the last run restored). With one: once per schedule window, on the latest backup;
 * missed windows are not caught up (only the newest one runs), as with backups.
 */
export function due(c: OpenBaoCluster, spec: RestoreTestSpec, now: Date): Due {
  const b = c.status?.backup ?? {};
  const key = b.lastBackupKey;
  if (!key) return { due: false, why: "no backup taken yet" };
  if (!spec.schedule) {
    if (key === b.lastVerificationBackupKey) return { due: false, why: "the latest backup was tested" };
    return { due: true, run: { key, window: "" } };
  }
  const cron = parseSchedule(spec.schedule, "spec.backup.restoreTest.schedule");
  const window = latestWindow(cron, now);
  const next = nextWindow(cron, now);
  const requeueMs = next ? Math.max(1000, next.getTime() - now.getTime()) : undefined;
  if (!window) return { due: false, requeueMs, why: "no schedule window has passed" };
  const last = b.lastVerificationScheduledTime;
  if (last && Date.parse(last) >= window.getTime())
    return { due: false, requeueMs, why: "this window was tested" };
  return { due: true, run: { key, window: stamp(window) } };
}

/**
 * Seconds between two runs: two consecutive windows of the test's schedule apart, or of the backup
 * schedule's without one (each backup is then tested once). Undefined without either.
 */
export function intervalSeconds(
  spec: RestoreTestSpec,
  backupSchedule: string | undefined,
  now: Date,
): number | undefined {
  const expr = spec.schedule ?? backupSchedule;
  if (!expr) return undefined;
  const cron = parseSchedule(
    expr,
    spec.schedule ? "spec.backup.restoreTest.schedule" : "spec.backup.schedule",
  );
  const [a, b] = cron.nextRuns(2, now);
  return a && b ? (b.getTime() - a.getTime()) / 1000 : undefined;
}

/** Whether the run this throwaway serves is recorded on the source already. */
export function recorded(c: OpenBaoCluster, run: Run): boolean {
  const b = c.status?.backup ?? {};
  return (
    b.lastVerificationBackupKey === run.key &&
    (b.lastVerificationScheduledTime ?? "") === run.window &&
    !!b.lastVerificationTime &&
    Date.parse(b.lastVerificationTime) >= Math.floor(run.startedAt.getTime() / 1000) * 1000
  );
}

export function plan(o: Observed): Plan {
  const spec = enabled(o.source);
  const t = o.throwaway;
  // Leftovers first: a throwaway of a run that is over (recorded, disabled, being deleted) goes,
  // then its volumes.
  if (t) {
    if (t.deleting || !spec || !t.run || o.source.metadata.deletionTimestamp || recorded(o.source, t.run))
      return { kind: "cleanup" };
    return running(o, spec, t.run, t);
  }
  if (o.restore || o.claims > 0) return { kind: "cleanup" };
  if (!spec) return { kind: "idle" };
  if (o.source.metadata.deletionTimestamp) return { kind: "idle" };
  let d: Due;
  try {
    d = due(o.source, spec, o.now);
    timeoutMs(spec);
  } catch (e) {
    if (e instanceof ScheduleError || e instanceof Error)
      return { kind: "idle", invalid: { message: e.message } };
    throw e;
  }
  if (!d.due) return { kind: "idle", requeueMs: d.requeueMs };
  return { kind: "start", run: d.run };
}

function running(o: Observed, spec: RestoreTestSpec, run: Run, t: ThrowawayView): Plan {
  const fail = (reason: OpenBaoClusterReasonType, message: string): Plan => ({
    kind: "record",
    outcome: { passed: false, key: run.key, window: run.window, reason, message },
  });
  let limit = DEFAULT_TIMEOUT_MS;
  try {
    limit = timeoutMs(spec);
  } catch {
    // An invalid timeout is reported when the next run would start; this one keeps the default.
  }
  const elapsed = o.now.getTime() - run.startedAt.getTime();
  const stage = !t.initialized
    ? "the throwaway cluster was not initialized"
    : !o.restore
      ? "the restore was not created"
      : `the restore was ${o.restore.phase}`;
  // A restore that ended is judged on its own terms, whatever the clock says.
  if (o.restore?.phase === "Failed")
    return fail(
      // OpenBao checked the snapshot's hash file with the seal the throwaway copied from the source
      // and it did not open: a reason of its own, since no new backup of the same kind fixes it.
      o.restore.failureReason === OpenBaoRestoreReason.SealMismatch
        ? R.RestoreTestSealMismatch
        : R.RestoreTestRestoreFailed,
      `restoring ${run.key}: ${o.restore.message ?? "failed"}`,
    );
  if (o.restore?.phase === "Completed") return { kind: "probe", run };
  if (elapsed > limit)
    return fail(R.RestoreTestTimedOut, `not finished after ${Math.round(elapsed / 1000)}s: ${stage}`);
  const left = Math.max(1000, Math.min(POLL_MS, limit - elapsed + 1000));
  if (!t.initialized) return { kind: "wait", why: "throwaway cluster initializing", requeueMs: left };
  if (!o.restore) return { kind: "create-restore", run };
  return { kind: "wait", why: `restore ${o.restore.phase}`, requeueMs: left };
}

/**
 * The outcome of a probe of the restored pod. A sealed pod right after the restore's restart may
 * still be starting: it is waited for (PROBE_GRACE_MS from the restore's completion) rather than
 * failed at once.
 */
export function judge(run: Run, probe: Probe, now: Date, completedAt: Date | undefined): Plan {
  if (probe.kind === "ok")
    return { kind: "record", outcome: { passed: true, key: run.key, window: run.window } };
  const since = now.getTime() - (completedAt ?? now).getTime();
  const reason = probe.kind === "sealed" ? R.RestoreTestSealed : R.RestoreTestCanaryMissing;
  if (since <= PROBE_GRACE_MS)
    return {
      kind: "wait",
      why: probe.message,
      requeueMs: Math.max(1000, Math.min(5000, PROBE_GRACE_MS - since + 1000)),
    };
  return {
    kind: "record",
    outcome: { passed: false, key: run.key, window: run.window, reason, message: probe.message },
  };
}

/** status.backup after an outcome: pure. */
export function recordOutcome(b: BackupStatus, outcome: Outcome, now: Date): BackupStatus {
  const next: Record<string, unknown> = { ...b };
  next["lastVerificationTime"] = stamp(now);
  next["lastVerificationBackupKey"] = outcome.key;
  if (outcome.window) next["lastVerificationScheduledTime"] = outcome.window;
  else delete next["lastVerificationScheduledTime"];
  if (outcome.passed) {
    next["lastVerifiedTime"] = stamp(now);
    next["lastVerifiedBackupKey"] = outcome.key;
    delete next["lastVerificationFailureReason"];
    delete next["lastVerificationFailureMessage"];
  } else {
    next["lastVerificationFailureReason"] = outcome.reason;
    next["lastVerificationFailureMessage"] = outcome.message.slice(0, 4000);
  }
  return next as BackupStatus;
}
