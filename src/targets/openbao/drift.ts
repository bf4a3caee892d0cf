// The one-line account of what a pass changed, or in observe-only mode would change: the Drifted
// condition's message, the planned-changes metric and the "would write" log line. It names objects,
// pods and Autopilot keys, never values; the order is fixed so the same drift always gives the same
// text and a resync does not rewrite the condition.

export const DRIFT_ACTIONS = [
  "create",
  "update",
  "delete",
  "grow-volume",
  "initialize",
  "step-down",
  "remove-peer",
  "autopilot",
  "backup",
] as const;

export type DriftAction = (typeof DRIFT_ACTIONS)[number];

export interface DriftChange {
  action: DriftAction;
  /**
   * "Kind/name" for objects (a backup names the Job it would start), the pod for initialize and
   * Raft, the setting for autopilot.
   */
  what: string;
}

// A condition message is capped at 32 KiB; the names are cut long before that.
export const MAX_NAMED_PER_ACTION = 20;

export function countDrift(changes: readonly DriftChange[]): Map<DriftAction, number> {
  const counts = new Map<DriftAction, number>();
  for (const action of DRIFT_ACTIONS) {
    const n = new Set(changes.filter((c) => c.action === action).map((c) => c.what)).size;
    if (n > 0) counts.set(action, n);
  }
  return counts;
}

/** "2 create (ConfigMap/a, Service/b), 1 initialize (bao-0)"; "" when nothing would change. */
export function summarizeDrift(changes: readonly DriftChange[]): string {
  const parts: string[] = [];
  for (const [action, count] of countDrift(changes)) {
    const names = [...new Set(changes.filter((c) => c.action === action).map((c) => c.what))].sort();
    const named = names.slice(0, MAX_NAMED_PER_ACTION);
    const more = names.length - named.length;
    parts.push(`${count} ${action} (${named.join(", ")}${more > 0 ? `, and ${more} more` : ""})`);
  }
  return parts.join(", ");
}
