import { collate } from "./text-order.js";
import { isoSeconds } from "./utc-time.js";
/**
 * A reason taken from a kind's reason table. The tables (`src/apis/*-names.ts`) brand each value with
 * this property, so a condition or event reason spelled as a bare string does not compile; the brand
 * exists for the type checker only. The runtime knows no kind, so it asks only that the reason came
 * from some table; a target's helpers narrow it to their kind's union.
 */
export type KindReason = string & { readonly __reasonOf: string };

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** A condition to set; its reason comes from a reason table (`R` narrows it to one kind's). */
export interface ConditionInput<R extends KindReason = KindReason> {
  type: string;
  status: Condition["status"];
  observedGeneration?: number;
  reason: R;
  message: string;
}

/**
 * Returns the list with `input` set. lastTransitionTime moves only when the status changes, so
 * a reason or message update does not look like a transition.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = prev && prev.status === input.status ? prev.lastTransitionTime : isoSeconds(now);
  const next: Condition = { ...input, message: input.message.slice(0, 32_768), lastTransitionTime };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}

/** Compares two lists ignoring order and lastTransitionTime-only churn: "would writing change anything?" */
export function sameConditions(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const norm = (l: readonly Condition[] | undefined) =>
    JSON.stringify(
      [...(l ?? [])]
        .sort((x, y) => collate(x.type, y.type))
        .map((c) => [
          c.type,
          c.status,
          c.reason,
          c.message,
          c.observedGeneration ?? null,
          c.lastTransitionTime,
        ]),
    );
  return norm(a) === norm(b);
}
