import { applyIfChanged } from "../../../runtime/apply.js";
import type { KubeClient } from "../../../runtime/client.js";
import { ApiError, errorMessage, isConflict, isNotFound } from "../../../runtime/errors.js";
import { setControllerReference } from "../../../runtime/ownership.js";
import { inventoryId } from "../../../runtime/prune.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { type AppliedMemory, cachedObject, intentDigest, type LiveObjects } from "./live.js";
import { describeObject, redactedError } from "./objects.js";
import { FIELD_MANAGER } from "./plan.js";
import { kindKey, type RenderedObject } from "./rendered.js";

export interface ApplyReport {
  /** Objects written this pass ("Kind namespace/name"). */
  applied: string[];
  /** Objects that already matched: no write. */
  unchanged: number;
  /** Kinds the cluster does not serve, as `<apiVersion>/<Kind>`; none of their objects was applied. */
  unserved: string[];
  failed: { object: string; error: string }[];
  /**
   * Objects an immutable field keeps from being updated (a Job's pod template) whose old copy is
   * deleted but not gone yet (a finalizer holds it): created by a later pass, which the old copy's
   * deletion wakes. Each names the object and what holds it.
   */
  replacing: { object: string; finalizers: string[] }[];
  /** `<apiVersion>/<Kind>` of every served kind the plan held. */
  servedKinds: string[];
  /** The objects as stored (or as a dry run would store them), for readiness. */
  live: KubeObject[];
  /** Would change, in a dry run (observe-only). */
  wouldApply: string[];
  /** Inventory ids of every object of a served kind the plan held: prune keeps them, applied or not. */
  keep: Set<string>;
}

export interface ApplyOptions {
  /** Observe-only: every decision is made, nothing is stored. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Informers holding the release's objects; without them each object is read from the API. */
  live?: LiveObjects;
  /** What was applied before, so an unchanged object whose cache entry did not move costs no request. */
  memory?: AppliedMemory;
  /** Prefix of this release's entries in `memory`. */
  memoryKey?: string;
}

/**
 * Server-side applies each planned object under {@link FIELD_MANAGER} with ownership forced, writing
 * only what would change (applyIfChanged), so a pass over unchanged inputs makes no write. A
 * namespaced object in the owner's namespace gets the owner as controller (Kubernetes deletes it with
 * the owner); a cluster-scoped one cannot, and is found by its release labels instead. A kind the
 * cluster does not serve, or an object the server refuses, is reported and the rest carry on.
 */
export async function applyPlanned(
  client: KubeClient,
  owner: KubeObject,
  objects: readonly RenderedObject[],
  opts: ApplyOptions = {},
): Promise<ApplyReport> {
  const report: ApplyReport = {
    applied: [],
    unchanged: 0,
    unserved: [],
    failed: [],
    replacing: [],
    servedKinds: [],
    live: [],
    wouldApply: [],
    keep: new Set(),
  };
  const served = new Set<string>();
  const unserved = new Set<string>();
  for (const rendered of objects) {
    opts.signal?.throwIfAborted();
    const key = kindKey(rendered);
    if (unserved.has(key)) continue;
    let type: ResourceType | undefined;
    try {
      type = await client.resources.find(rendered.apiVersion, rendered.kind);
    } catch (e) {
      report.failed.push({ object: describeObject(rendered), error: errorMessage(e) });
      continue;
    }
    if (!type) {
      unserved.add(key);
      continue;
    }
    served.add(key);
    const intent = withOwner(owner, rendered, type);
    const id = inventoryId(type, intent.metadata, type.namespaced);
    report.keep.add(id);
    try {
      const cached = cachedObject(opts.live ? await opts.live(type) : undefined, intent);
      const digest = intentDigest(intent);
      const memoryId = `${opts.memoryKey ?? ""}|${id}`;
      if (cached && opts.memory?.unchanged(memoryId, digest, cached)) {
        report.live.push(cached);
        report.unchanged++;
        continue;
      }
      const outcome = await applyOrReplace(client, intent, type, { ...opts, cached });
      if (outcome.action === "replacing") {
        opts.memory?.forget(memoryId);
        report.replacing.push({
          object: describeObject(intent),
          finalizers: outcome.old.metadata.finalizers ?? [],
        });
        continue;
      }
      if (outcome.action !== "dry-run") opts.memory?.remember(memoryId, digest, outcome.object);
      report.live.push(outcome.object);
      if (outcome.action === "applied") report.applied.push(describeObject(intent));
      else if (outcome.action === "dry-run") report.wouldApply.push(describeObject(intent));
      else report.unchanged++;
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      report.failed.push({ object: describeObject(intent), error: redactedError(intent, e) });
    }
  }
  report.servedKinds = [...served].sort();
  report.unserved = [...unserved].sort();
  return report;
}

/** A copy of the rendered object with the owner as controller where it can be (same namespace). */
export function withOwner(owner: KubeObject, rendered: RenderedObject, type: ResourceType): KubeObject {
  const copy: KubeObject = { ...rendered, metadata: { ...rendered.metadata } };
  if (!type.namespaced) {
    delete copy.metadata.namespace;
    return copy;
  }
  copy.metadata.namespace ??= owner.metadata.namespace;
  // Owner references cannot cross namespaces; an object the chart puts elsewhere keeps its labels only.
  if (copy.metadata.namespace === owner.metadata.namespace) setControllerReference(owner, copy);
  return copy;
}

const isImmutableJob = (type: ResourceType, e: unknown): boolean =>
  type.group === "batch" &&
  type.kind === "Job" &&
  e instanceof ApiError &&
  e.code === 422 &&
  /immutable/i.test(e.message);

/**
 * A Job's pod template cannot change once created. A chart that renders a Job under a stable name
 * with a new template (a new image on upgrade) gets it replaced: the old one deleted (by its uid,
 * its pods with it), then applied again at once, since nothing usually holds a Job. One that a
 * finalizer holds is left: "replacing", and the pass waits instead of polling; the old Job's
 * deletion (an event on the release's Job watch) brings the pass that creates the new one.
 */
async function applyOrReplace(
  client: KubeClient,
  intent: KubeObject,
  type: ResourceType,
  opts: ApplyOptions & { cached: KubeObject | null | undefined },
): Promise<
  | { object: KubeObject; action: "unchanged" | "applied" | "dry-run" }
  | { action: "replacing"; old: KubeObject }
> {
  const applyOpts = { fieldManager: FIELD_MANAGER, force: true, dryRun: opts.dryRun };
  try {
    return await applyIfChanged(client, intent, { ...applyOpts, live: opts.cached });
  } catch (e) {
    if (!isImmutableJob(type, e) || opts.dryRun) throw e;
  }
  const old = await client.getOrUndefined(type, intent.metadata.name!, intent.metadata.namespace);
  if (old?.metadata.uid && !old.metadata.deletionTimestamp)
    await client
      .delete(type, intent.metadata.name!, intent.metadata.namespace, {
        preconditions: { uid: old.metadata.uid },
        propagationPolicy: "Background",
      })
      .catch((err: unknown) => {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      });
  try {
    return await applyIfChanged(client, intent, { ...applyOpts, live: null });
  } catch (e) {
    // Still there (held by a finalizer, or deleted already and not gone): the next pass creates it.
    if (old && isImmutableJob(type, e)) return { action: "replacing", old };
    throw e;
  }
}
