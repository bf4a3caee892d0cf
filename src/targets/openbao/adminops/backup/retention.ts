import { parseDurationMs } from "../../workload/certs/duration.js";

/**
 * Which snapshots retention deletes. Pure; the controller lists and deletes.
 *
 * Retention runs in the controller, not as a step of the executor Job. The document keeps "schedule,
 * status, lock, and retention decisions" in the control plane, and what it forbids the controller is
 * handling snapshot bytes: listing keys and deleting objects moves none. Running it here also lets it
 * run after a failed attempt (guarded by the last success, as the document says), when no Job would
 * otherwise be started, and keeps a retention bug from failing the backup that just succeeded.
 */

export interface StoredSnapshot {
  key: string;
  lastModified?: Date;
}

export interface RetentionPolicy {
  maxCount?: number;
  maxAge?: string;
}

export interface RetentionInput {
  objects: readonly StoredSnapshot[];
  policy: RetentionPolicy | undefined;
  now: Date;
  /**
   * status.backup.lastBackupKey. Retention runs only when it is set (no success yet: nothing is known
   * good, so nothing is deleted), and never deletes it.
   */
  lastSuccessKey: string | undefined;
}

export function selectForDeletion(inp: RetentionInput): string[] {
  const p = inp.policy;
  if (!inp.lastSuccessKey || !p) return [];
  const maxCount = p.maxCount ?? 0;
  const maxAgeMs = p.maxAge ? parseDurationMs(p.maxAge, "spec.backup.retention.maxAge") : 0;
  if (maxCount <= 0 && maxAgeMs <= 0) return [];
  // Only the operator's own snapshots: keys end in .snap (someone else's file in the folder stays).
  const snaps = inp.objects.filter((o) => o.key.endsWith(".snap"));
  // Newest first. Keys start with a sortable UTC timestamp, which also orders objects whose
  // lastModified the store did not report.
  snaps.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  const doomed = new Set<string>();
  if (maxCount > 0) for (const o of snaps.slice(maxCount)) doomed.add(o.key);
  if (maxAgeMs > 0)
    for (const o of snaps)
      if (o.lastModified && inp.now.getTime() - o.lastModified.getTime() > maxAgeMs) doomed.add(o.key);
  doomed.delete(inp.lastSuccessKey);
  return snaps.filter((o) => doomed.has(o.key)).map((o) => o.key);
}
