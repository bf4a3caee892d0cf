// The one-line account of a plan used by the Drifted condition (observe-only), events and the
// Ready message. It counts changes by action and names keys, never values; the order is fixed so
// the same plan always gives the same text and a resync does not rewrite the condition.

export const PLAN_ACTIONS = [
  "create-path",
  "adopt",
  "add-field",
  "update-field",
  "rotate-field",
  "prune-field",
  "record-rotation",
  "start-rotation-period",
] as const;

export type PlanAction = (typeof PLAN_ACTIONS)[number];

export interface PlanChange {
  action: PlanAction;
  key?: string;
}

// A condition message is capped at 32 KiB; a seed with thousands of keys must not reach it.
export const MAX_KEYS_NAMED_PER_ACTION = 20;

export function countByAction(changes: readonly PlanChange[]): Map<PlanAction, number> {
  const counts = new Map<PlanAction, number>();
  for (const action of PLAN_ACTIONS) {
    const count = changes.filter((change) => change.action === action).length;
    if (count > 0) counts.set(action, count);
  }
  return counts;
}

export function summarizeChanges(changes: readonly PlanChange[]): string {
  const parts: string[] = [];
  for (const [action, count] of countByAction(changes)) {
    const keys = [
      ...new Set(changes.filter((c) => c.action === action && c.key !== undefined).map((c) => c.key!)),
    ].sort();
    let part = `${count} ${action}`;
    if (keys.length > 0) {
      const named = keys.slice(0, MAX_KEYS_NAMED_PER_ACTION);
      const more = keys.length - named.length;
      part += ` (${named.join(", ")}${more > 0 ? `, and ${more} more` : ""})`;
    }
    parts.push(part);
  }
  return parts.join(", ");
}
