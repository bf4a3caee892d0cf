/**
 * One conditional status write on an OpenBaoCluster: read the object fresh, compute one writer's
 * plane from it, and apply that plane through the status subresource with the read's
 * resourceVersion as a precondition. A write between the read and the apply makes the API server
 * answer 409, and the whole read-decide-apply runs again, so no decision is ever made on a stale
 * copy (the lock's mutual exclusion and the AdminOps plane's "no lost update" both rest on this).
 */
import type { OpenBaoCluster, OpenBaoClusterStatus } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import { ApiError, isConflict } from "../../../runtime/errors.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import type { ClusterRef } from "../identity.js";

/** A server-side apply field conflict (another manager owns a field with another value). */
export function isFieldManagerConflict(e: unknown): boolean {
  if (!(e instanceof ApiError) || e.code !== 409) return false;
  const causes = (e.details as { causes?: { type?: string }[] } | undefined)?.causes ?? [];
  return causes.some((c) => c.type === "FieldManagerConflict") || /^Apply failed with/.test(e.message);
}

export interface CasOptions {
  fieldManager: string;
  signal?: AbortSignal;
  /** Read-decide-apply rounds before giving up on a busy object (default 20). */
  maxAttempts?: number;
  /**
   * Called when the apply met a field conflict with another manager. Returning true retries with
   * force (server-side apply conflict recovery); false or absent lets the conflict error through.
   */
  onFieldConflict?: (e: ApiError) => boolean;
}

export interface CasResult<D> {
  /** The decision made on the read that was written (or that needed no write). */
  decision: D;
  /** The object after the write, or as read when nothing was written. */
  cluster: OpenBaoCluster;
  wrote: boolean;
  /** Rounds that lost a race to another writer and re-read. */
  retries: number;
  /** The write took fields from another manager (server-side apply conflict recovery). */
  forced: boolean;
}

/**
 * A status write that kept losing to other writers: nothing was written, and the caller's reconcile
 * is requeued to try again (the error is not about the object's content).
 */
export class LostRacesError extends Error {
  override name = "LostRacesError";
}

/**
 * `decide` gets the fresh object and returns the decision and the writer's whole plane to apply, or
 * no plane when nothing needs writing. It runs again after each lost race, so it must be pure.
 */
export async function casStatus<D>(
  client: KubeClient,
  ref: ClusterRef,
  decide: (fresh: OpenBaoCluster) => { decision: D; plane?: OpenBaoClusterStatus },
  opts: CasOptions,
): Promise<CasResult<D>> {
  const max = opts.maxAttempts ?? 20;
  let forced = false;
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    const fresh = await client.get<OpenBaoCluster>(OPENBAOCLUSTER, ref.name, ref.namespace);
    const { decision, plane } = decide(fresh);
    if (!plane) return { decision, cluster: fresh, wrote: false, retries: attempt, forced };
    const body = {
      apiVersion: fresh.apiVersion,
      kind: fresh.kind,
      metadata: { name: ref.name, namespace: ref.namespace, resourceVersion: fresh.metadata.resourceVersion },
      status: plane,
    };
    try {
      const written = await client.applyStatus<OpenBaoCluster>(OPENBAOCLUSTER, body, {
        fieldManager: opts.fieldManager,
        force: forced,
        signal: opts.signal,
      });
      return { decision, cluster: written, wrote: true, retries: attempt, forced };
    } catch (e) {
      if (isFieldManagerConflict(e) && !forced && opts.onFieldConflict?.(e as ApiError)) {
        forced = true;
      } else if (!isConflict(e) || isFieldManagerConflict(e)) {
        throw e;
      }
      if (attempt + 1 >= max)
        throw new LostRacesError(
          `${ref.namespace}/${ref.name}: status write under ${opts.fieldManager} lost ${max} races in a row; will retry`,
        );
      // A short random pause keeps writers that collided from colliding again in lockstep.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 20 * (attempt + 1))));
    }
  }
}
