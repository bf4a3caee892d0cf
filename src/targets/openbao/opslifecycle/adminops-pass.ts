/**
 * One AdminOps status write per pass. A pass stages its changes of the AdminOps plane here as it
 * goes (each decided at once on the cluster read fresh at the first change, so the caller knows
 * whether it changed anything and can say so in an event), and `commit` applies them together: one
 * conditional apply through the runtime's casStatus, on that same read. A lost race re-reads and
 * replays the staged changes (pure functions) on the fresher plane, as every plane write does.
 *
 * Only the operation lock writes mid-pass (its own plane, its own field manager); a pass commits its
 * staged changes before releasing the lock, so what the lock protected is recorded before another
 * operation can take it.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { ReconcileContext } from "../../../runtime/controller.js";
import { deepEqual } from "../../../runtime/converge.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";
import type { PlaneWriteResult } from "./adminops-plane.js";
import { casStatus } from "./cas.js";
import {
  ADMINOPS_FIELD_MANAGER,
  type AdminOpsPlane,
  adminOpsPlaneOf,
  isAdminOpsCondition,
  workloadPlaneOf,
} from "./planes.js";

/** A change of the whole plane: the next plane, or undefined to leave it. Must be pure. */
export type PlaneChange = (plane: AdminOpsPlane, fresh: OpenBaoCluster) => AdminOpsPlane | undefined;

/** The pass context of the AdminOps controller: the plane's pending changes ride along. */
export interface AdminOpsContext extends ReconcileContext {
  adminOps?: AdminOpsPass;
}

export class AdminOpsPass {
  private base?: OpenBaoCluster;
  private view?: AdminOpsPlane;
  private readonly staged: PlaneChange[] = [];
  /** Plane applies made (for the tests that count a pass's writes). */
  commits = 0;

  constructor(
    private readonly client: KubeClient,
    readonly ref: ClusterRef,
    private readonly fieldManager = ADMINOPS_FIELD_MANAGER,
  ) {}

  /** Stages `change`; `wrote` says whether it changes the plane as this pass sees it. */
  async change(ref: ClusterRef, change: PlaneChange): Promise<PlaneWriteResult> {
    if (ref.name !== this.ref.name || ref.namespace !== this.ref.namespace)
      throw new Error(
        `AdminOps pass of ${this.ref.namespace}/${this.ref.name} asked to write ${ref.namespace}/${ref.name}`,
      );
    if (!this.base) {
      this.base = await this.client.get<OpenBaoCluster>(OPENBAOCLUSTER, ref.name, ref.namespace);
      this.view = adminOpsPlaneOf(this.base.status);
    }
    const before = this.view!;
    const next = change(structuredClone(before), this.base);
    const wrote = next !== undefined && !deepEqual(before, next);
    if (wrote) {
      this.view = next;
      this.staged.push(change);
    }
    return { cluster: withPlane(this.base, this.view!), wrote, retries: 0 };
  }

  /**
   * The cluster as a write outside the plane (the lock's) left it: staged changes are replayed on
   * it, so the commit's conditional apply starts from its resourceVersion instead of losing a race
   * to that write.
   */
  observed(cluster: OpenBaoCluster): void {
    if (!this.base || cluster.metadata.resourceVersion === this.base.metadata.resourceVersion) return;
    let view = adminOpsPlaneOf(cluster.status);
    for (const change of this.staged) view = change(structuredClone(view), cluster) ?? view;
    this.base = cluster;
    this.view = view;
  }

  /** Applies what was staged, once; nothing staged (or nothing left to change) writes nothing. */
  async commit(signal?: AbortSignal): Promise<{ wrote: boolean }> {
    const base = this.base;
    const staged = this.staged.splice(0);
    this.base = undefined;
    this.view = undefined;
    if (!base || staged.length === 0) return { wrote: false };
    const r = await casStatus(
      this.client,
      this.ref,
      (fresh) => {
        const before = adminOpsPlaneOf(fresh.status);
        let next = before;
        for (const change of staged) next = change(structuredClone(next), fresh) ?? next;
        return deepEqual(before, next) ? { decision: undefined } : { decision: undefined, plane: next };
      },
      { fieldManager: this.fieldManager, signal, firstRead: base },
    );
    if (r.wrote) this.commits++;
    return { wrote: r.wrote };
  }
}

/**
 * Where a plane change goes: staged in the pass when there is one, else written at once (one fresh
 * read, one conditional apply), as writers outside a pass (tests, tools) do.
 */
export async function changePlane(
  to: KubeClient | AdminOpsPass,
  ref: ClusterRef,
  change: PlaneChange,
  signal?: AbortSignal,
): Promise<PlaneWriteResult> {
  if (to instanceof AdminOpsPass) return to.change(ref, change);
  const r = await casStatus(
    to,
    ref,
    (fresh) => {
      const before = adminOpsPlaneOf(fresh.status);
      const next = change(structuredClone(before), fresh);
      return next === undefined || deepEqual(before, next)
        ? { decision: undefined }
        : { decision: undefined, plane: next };
    },
    { fieldManager: ADMINOPS_FIELD_MANAGER, signal },
  );
  return { cluster: r.cluster, wrote: r.wrote, retries: r.retries };
}

/** The cluster as the pass sees it: its read with the staged plane in place of the read's plane. */
function withPlane(cluster: OpenBaoCluster, plane: AdminOpsPlane): OpenBaoCluster {
  const others = workloadPlaneOf(cluster.status);
  const lock = cluster.status?.operationLock;
  const { conditions: mine = [], ...fields } = plane;
  const conditions = [...(others.conditions ?? []).filter((c) => !isAdminOpsCondition(c)), ...mine];
  return {
    ...cluster,
    status: {
      ...others,
      ...fields,
      ...(lock ? { operationLock: lock } : {}),
      ...(conditions.length ? { conditions } : {}),
    },
  };
}

/** Where this pass's plane changes go: its AdminOpsPass, or `client` outside a pass. */
export const planeTarget = (rc: AdminOpsContext, client: KubeClient): KubeClient | AdminOpsPass =>
  rc.adminOps ?? client;

/** Commits the pass's staged changes: before a lock release, so the lock's state is recorded first. */
export async function commitBeforeRelease(rc: AdminOpsContext): Promise<void> {
  await rc.adminOps?.commit(rc.signal);
}

/** A pass context whose plane changes are staged in `adminOps`. */
export type InAdminOpsPass = AdminOpsContext & { adminOps: AdminOpsPass };

/**
 * Runs `pass` in the AdminOps pass `rc` carries (its owner commits it), or in one of its own that
 * is committed when `pass` ends. What a failed pass decided before it failed is committed still,
 * and the pass's error is the one thrown.
 */
export async function withAdminOpsPass<T>(
  client: KubeClient,
  ref: ClusterRef,
  rc: AdminOpsContext,
  pass: (rc: InAdminOpsPass) => Promise<T>,
): Promise<T> {
  if (rc.adminOps) return pass({ ...rc, adminOps: rc.adminOps });
  const adminOps = new AdminOpsPass(client, ref);
  let out: T;
  try {
    out = await pass({ ...rc, adminOps });
  } catch (e) {
    if (!rc.signal.aborted) await adminOps.commit(rc.signal).catch(() => undefined);
    throw e;
  }
  await adminOps.commit(rc.signal);
  return out;
}
