/**
 * The AdminOps status-plane writer. Backup and upgrade state share one plane under one field
 * manager, so a writer must never apply a plane built from an old read: it would put back the
 * sibling concern's old values. Each write reads the cluster fresh, changes one concern, and applies
 * the whole plane conditionally on that read (cas.ts); a race re-reads and re-applies the change.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { Condition } from "../../../runtime/conditions.js";
import { deepEqual } from "../../../runtime/converge.js";
import type { ClusterRef } from "../identity.js";
import { casStatus } from "./cas.js";
import {
  ADMINOPS_FIELD_MANAGER,
  type AdminOpsPlane,
  adminOpsPlaneOf,
  isAdminOpsCondition,
} from "./planes.js";

/** One concern of the plane; `conditions` here means the AdminOps condition types only. */
export type AdminOpsConcern =
  | "backup"
  | "upgrade"
  | "blueGreen"
  | "upgradeRequests"
  | "breakGlass"
  | "adminOps"
  | "runtimeRestart"
  | "conditions";

export interface PlaneWriteResult {
  /** The cluster after the write (or as read when nothing changed). */
  cluster: OpenBaoCluster;
  wrote: boolean;
  /** Lost races that were re-read and re-applied. */
  retries: number;
}

export interface PlaneWriteOptions {
  fieldManager?: string;
  signal?: AbortSignal;
}

/**
 * Sets one concern to what `change` returns from its current value (undefined removes it). `change`
 * may run more than once (after a lost race), each time on fresher data, so it must be pure.
 * Writing `backup` keeps upstream's top-level status.lastBackupTime equal to backup.lastBackupTime.
 */
export async function writeAdminOpsConcern<K extends AdminOpsConcern>(
  client: KubeClient,
  ref: ClusterRef,
  concern: K,
  change: (current: AdminOpsPlane[K] | undefined, fresh: OpenBaoCluster) => AdminOpsPlane[K] | undefined,
  opts: PlaneWriteOptions = {},
): Promise<PlaneWriteResult> {
  const r = await casStatus(
    client,
    ref,
    (fresh) => {
      const before = adminOpsPlaneOf(fresh.status);
      const next = applyConcern(before, concern, change(structuredClone(before[concern]), fresh));
      return deepEqual(before, next) ? { decision: undefined } : { decision: undefined, plane: next };
    },
    { fieldManager: opts.fieldManager ?? ADMINOPS_FIELD_MANAGER, signal: opts.signal },
  );
  return { cluster: r.cluster, wrote: r.wrote, retries: r.retries };
}

/** The plane with one concern replaced; pure, exported for the unit tests. */
export function applyConcern<K extends AdminOpsConcern>(
  plane: AdminOpsPlane,
  concern: K,
  value: AdminOpsPlane[K] | undefined,
): AdminOpsPlane {
  const next: AdminOpsPlane = { ...plane };
  if (concern === "conditions") {
    const list = (value ?? []) as Condition[];
    const foreign = list.filter((c) => !isAdminOpsCondition(c)).map((c) => c.type);
    // Writing another plane's condition here would make the AdminOps manager co-own it.
    if (foreign.length)
      throw new Error(
        `AdminOps plane: condition types ${foreign.join(", ")} are not AdminOps conditions (planes.ts)`,
      );
    if (list.length) next.conditions = list;
    else delete next.conditions;
  } else if (value === undefined) {
    delete next[concern as Exclude<K, "conditions">];
  } else {
    (next as Record<string, unknown>)[concern] = value;
  }
  if (concern === "backup") {
    const t = next.backup?.lastBackupTime;
    if (t) next.lastBackupTime = t;
  }
  return next;
}
