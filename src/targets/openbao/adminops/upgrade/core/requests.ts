/**
 * Edge-triggered requests (spec.upgrade.requests.{retry,promote,rollback}), pure. A request acts when
 * its value differs from the value last handled (status.upgradeRequests.lastHandled*), and is
 * recorded as handled in the same status write that acts on it, so one value acts exactly once,
 * whatever restarts happen around it. An unset request never acts; clearing one is not a request.
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../../../../apis/openbaocluster.js";

export type RequestKind = "retry" | "promote" | "rollback";
export type UpgradeRequestsStatus = NonNullable<OpenBaoClusterStatus["upgradeRequests"]>;

const HANDLED: Record<RequestKind, keyof UpgradeRequestsStatus> = {
  retry: "lastHandledRetry",
  promote: "lastHandledPromote",
  rollback: "lastHandledRollback",
};

/** The new value of request `kind`, or undefined when there is none to act on. */
export function pendingRequest(
  spec: OpenBaoCluster["spec"],
  handled: UpgradeRequestsStatus | undefined,
  kind: RequestKind,
): string | undefined {
  const value = spec.upgrade?.requests?.[kind];
  if (value === undefined || value === "") return undefined;
  return handled?.[HANDLED[kind]] === value ? undefined : value;
}

/** status.upgradeRequests with `value` recorded as handled for `kind`. */
export function markHandled(
  handled: UpgradeRequestsStatus | undefined,
  kind: RequestKind,
  value: string,
): UpgradeRequestsStatus {
  return { ...(handled ?? {}), [HANDLED[kind]]: value };
}
