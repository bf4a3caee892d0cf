/**
 * Who writes which part of OpenBaoCluster.status. Four writers share the status subresource, each
 * under its own server-side apply field manager, and each applies only its own plane: a writer that
 * applied a copy of another plane would co-own those fields (and, with force, take them), so a stale
 * copy could overwrite a newer value and a field could never be removed by its real owner.
 */

import type { OpenBaoClusterStatus } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterCondition, OpenBaoClusterManagers } from "../../../apis/openbaocluster-names.js";
import type { Condition } from "../../../runtime/conditions.js";

/** The workload controller (src/targets/openbao/status.ts); unchanged name so existing ownership stays. */
export const WORKLOAD_FIELD_MANAGER = OpenBaoClusterManagers.workload;
/** status.operationLock and nothing else. */
export const LOCK_FIELD_MANAGER = OpenBaoClusterManagers.lock;
/** The AdminOps plane: backup and upgrade state and the AdminOps conditions. */
export const ADMINOPS_FIELD_MANAGER = OpenBaoClusterManagers.adminOps;

/** Top-level status fields of the AdminOps plane (conditions are split by type, below). */
export const ADMINOPS_FIELDS = [
  "backup",
  "lastBackupTime",
  "upgrade",
  "blueGreen",
  "upgradeRequests",
  "breakGlass",
  "adminOps",
  "acceptedUpgradeStrategy",
  "runtimeRestart",
] as const satisfies readonly (keyof OpenBaoClusterStatus)[];
export type AdminOpsField = (typeof ADMINOPS_FIELDS)[number];

/** The lock's plane. */
export const LOCK_FIELDS = ["operationLock"] as const satisfies readonly (keyof OpenBaoClusterStatus)[];

/** status.restore: the restore controller's record of the restore whose restart the cluster went through. */
export const RESTORE_RECORD_FIELD_MANAGER = OpenBaoClusterManagers.restoreRecord;
export const RESTORE_RECORD_FIELDS = ["restore"] as const satisfies readonly (keyof OpenBaoClusterStatus)[];

/** The restore record's plane of a status: status.restore and nothing else. */
export function restoreRecordPlaneOf(
  status: OpenBaoClusterStatus | undefined,
): Pick<OpenBaoClusterStatus, "restore"> {
  return status?.restore ? { restore: structuredClone(status.restore) } : {};
}

/**
 * Condition types the AdminOps writer owns on the cluster. conditions is a list-map keyed by type,
 * so each entry has its own owner; a new AdminOps condition type must be added here, or the workload
 * writer would carry (and co-own) it.
 */
export const ADMINOPS_CONDITION_TYPES: readonly string[] = [
  OpenBaoClusterCondition.BackingUp,
  OpenBaoClusterCondition.Upgrading,
  OpenBaoClusterCondition.Restarting,
  // The restore test's outcome, written next to status.backup's lastVerified* fields.
  OpenBaoClusterCondition.BackupVerified,
];

const FOREIGN_FIELDS: ReadonlySet<string> = new Set<string>([
  ...ADMINOPS_FIELDS,
  ...LOCK_FIELDS,
  ...RESTORE_RECORD_FIELDS,
]);

export const isAdminOpsCondition = (c: Pick<Condition, "type">): boolean =>
  ADMINOPS_CONDITION_TYPES.includes(c.type);

/** The AdminOps plane of a status: its fields and its conditions, nothing else. */
export type AdminOpsPlane = Pick<OpenBaoClusterStatus, AdminOpsField> & { conditions?: Condition[] };

export function adminOpsPlaneOf(status: OpenBaoClusterStatus | undefined): AdminOpsPlane {
  const plane: AdminOpsPlane = {};
  for (const k of ADMINOPS_FIELDS) {
    const v = status?.[k];
    if (v !== undefined) (plane as Record<string, unknown>)[k] = structuredClone(v);
  }
  const conditions = (status?.conditions ?? []).filter(isAdminOpsCondition);
  if (conditions.length) plane.conditions = structuredClone(conditions);
  return plane;
}

/** The workload plane: everything the AdminOps, lock and restore-record writers do not own. */
export function workloadPlaneOf(status: OpenBaoClusterStatus | undefined): OpenBaoClusterStatus {
  const plane: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status ?? {})) {
    if (FOREIGN_FIELDS.has(k) || v === undefined) continue;
    plane[k] = k === "conditions" ? (v as Condition[]).filter((c) => !isAdminOpsCondition(c)) : v;
  }
  return plane as OpenBaoClusterStatus;
}
