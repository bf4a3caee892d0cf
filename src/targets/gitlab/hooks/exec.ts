import { GitLabHookRunAnnotation } from "../../../apis/gitlabcore-names.js";
import type { KubeClient } from "../../../runtime/client.js";
import { errorMessage, isNotFound } from "../../../runtime/errors.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Logger } from "../../../runtime/log.js";
import { type KubeObject, objectKey, type ResourceType } from "../../../runtime/types.js";
import type { LiveObjects } from "../apply/live.js";
import { describeObject, redactedError } from "../apply/objects.js";
import { FIELD_MANAGER } from "../apply/plan.js";
import type { HookMemory } from "./memory.js";
import { deletionsAfterFailure, deletionsAfterSuccess, hasPolicy, type PlannedHook } from "./plan.js";

export { HookMemory } from "./memory.js";

export interface HookRunOptions {
  /** The run these hooks belong to (status.hookRun.id), stamped on each object created. */
  runId: string;
  /** The release's key: what the memory files this run under. */
  release: string;
  /** How long one hook (a Job, a Pod) may take from its creation before the run fails. */
  timeoutMs: number;
  /** When to look again for a kind no watch covers (no informer): nothing else would wake the pass. */
  pollMs: number;
  /** Informers of the release's kinds; their watches wake the release when a hook changes. */
  live?: LiveObjects | undefined;
  memory: HookMemory;
  /**
   * The run is recorded as succeeded (status.hookRun.succeeded): its hooks ran, and the
   * hook-succeeded deletions may be half done. Only those deletions are finished; nothing is created.
   */
  succeeded?: boolean;
  /**
   * Records that every hook succeeded, before the first hook-succeeded deletion: a deleted hook is
   * otherwise indistinguishable from one not yet created, and a restart would run it again.
   */
  onSucceeded?: () => Promise<void>;
  now: () => Date;
  signal?: AbortSignal;
  log: Logger;
}

/**
 * Where one event's hooks stand after a look at them. Each hook completed in this look is named
 * in `completed` (said once per run, however many passes see it).
 */
export type HookProgress =
  | { kind: "done"; completed: string[]; deleted: string[] }
  /** A hook is running (or an old one is being deleted): look again in `afterMs` at the latest. */
  | { kind: "waiting"; hook: string; afterMs: number; completed: string[] }
  | { kind: "failed"; hook: string; error: string; completed: string[]; deleted: string[] };

/** A hook as created: the object sent and the resource it is of. */
interface HookObject {
  type: ResourceType;
  object: KubeObject;
}

type HookState = { done: true } | { done: false; failed?: string; ageMs?: number };

/**
 * One look at an event's hooks, run as Helm's execHook runs them, but never waiting inside the
 * pass: each hook in order is found (the release's informers) or created, stamped with the run's
 * id; a Job or Pod still running ends the look with `waiting`, and the watch on its kind brings
 * the next pass when it changes. A hook from an earlier run is deleted first under
 * before-hook-creation (the deletion's event brings the next pass, which creates it). When a hook
 * fails or times out (counted from the object's creationTimestamp, so a restarted operator keeps
 * the deadline): it is deleted if it says hook-failed, the hooks that succeeded before it are
 * deleted if they say hook-succeeded, and the rest never run. Only when every hook succeeded are
 * the hook-succeeded ones deleted, last first, so a ConfigMap hook a later Job mounts is there
 * until that Job is done. A hook with neither policy stays. As in Helm, what a hook creates is
 * not part of the release: no owner reference, so deleting the GitLabCore leaves what the
 * policies keep, and prune never deletes it (see prune/index.ts).
 */
export async function advanceHooks(
  client: KubeClient,
  owner: KubeObject,
  hooks: readonly PlannedHook[],
  opts: HookRunOptions,
): Promise<HookProgress> {
  const completed: string[] = [];
  const objects: (HookObject | undefined)[] = [];
  opts.memory.startRun(opts.release, opts.runId);
  if (opts.succeeded) {
    for (const [i, planned] of hooks.entries()) objects[i] = await objectFor(client, owner, planned);
    const deleted = await removeAll(client, deletionsAfterSuccess(hooks), hooks, objects, opts);
    return { kind: "done", completed, deleted };
  }
  for (const [i, planned] of hooks.entries()) {
    opts.signal?.throwIfAborted();
    const name = describeObject(inNamespace(planned.hook.object, owner));
    let state: HookState;
    let watched = false;
    try {
      const obj = await objectFor(client, owner, planned);
      objects[i] = obj;
      // A kind without an informer (none given, or one the operator may not list) has no watch.
      const cache = opts.live ? await opts.live(obj.type) : undefined;
      watched = cache !== undefined;
      let live = await liveOf(client, obj, opts, name, cache);
      if (live && live.metadata.annotations?.[GitLabHookRunAnnotation] !== opts.runId) {
        // Another run's object (or one made by hand).
        if (live.metadata.deletionTimestamp)
          return { kind: "waiting", hook: name, afterMs: opts.pollMs, completed };
        if (hasPolicy(planned, "before-hook-creation")) {
          await deleteLive(client, obj.type, live);
          opts.log.info({ hook: name }, "hook of an earlier run deleted before its creation");
          return { kind: "waiting", hook: name, afterMs: opts.pollMs, completed };
        }
        live = undefined; // kept by its policy: applied over, as Helm's create would update it
      }
      if (!live) {
        live = await client.apply(obj.type, stamped(obj.object, opts.runId), {
          fieldManager: FIELD_MANAGER,
          force: true,
          signal: opts.signal,
        });
        opts.memory.created(opts.release, opts.runId, name, live.metadata.uid);
        if (opts.memory.first(opts.release, opts.runId, "started", name))
          opts.log.info({ hook: name, weight: planned.hook.weight }, "hook started");
      }
      state = stateOf(obj.type, live, opts);
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      // A hook that could not even be created or read: Helm returns at once, deleting nothing.
      return {
        kind: "failed",
        hook: name,
        error: redactedError(planned.hook.object, e),
        completed,
        deleted: [],
      };
    }
    if (state.done) {
      if (opts.memory.first(opts.release, opts.runId, "completed", name)) {
        opts.log.info({ hook: name }, "hook completed");
        completed.push(name);
      }
      continue;
    }
    if (state.failed === undefined) {
      const left = opts.timeoutMs - (state.ageMs ?? 0);
      // Watched: the Job's own events wake the pass; the requeue only keeps the deadline.
      return {
        kind: "waiting",
        hook: name,
        afterMs: Math.max(1, watched ? left : Math.min(left, opts.pollMs)),
        completed,
      };
    }
    const deleted = await removeAll(client, deletionsAfterFailure(hooks, i), hooks, objects, opts);
    return { kind: "failed", hook: name, error: state.failed, completed, deleted };
  }
  await opts.onSucceeded?.();
  const deleted = await removeAll(client, deletionsAfterSuccess(hooks), hooks, objects, opts);
  return { kind: "done", completed, deleted };
}

/** What the hook says: a Job until Complete (or Failed=True), a Pod until Succeeded; anything else is done once there. */
function stateOf(type: ResourceType, o: KubeObject, opts: HookRunOptions): HookState {
  const isJob = type.group === "batch" && type.kind === "Job";
  const isPod = type.group === "" && type.kind === "Pod";
  if (!isJob && !isPod) return { done: true };
  const status = (o as JobLike).status;
  const name = o.metadata.name;
  if (isJob) {
    const c = status?.conditions ?? [];
    if (c.some((x) => x.type === "Complete" && x.status === "True")) return { done: true };
    const failed = c.find((x) => x.type === "Failed" && x.status === "True");
    if (failed)
      return {
        done: false,
        failed: `Job ${name} failed: ${failed.reason ?? ""} ${failed.message ?? ""}`.trim(),
      };
  } else {
    if (status?.phase === "Succeeded") return { done: true };
    if (status?.phase === "Failed") return { done: false, failed: `Pod ${name} failed` };
  }
  const created = Date.parse(o.metadata.creationTimestamp ?? "");
  const ageMs = Number.isNaN(created) ? 0 : opts.now().getTime() - created;
  if (ageMs >= opts.timeoutMs)
    return {
      done: false,
      ageMs,
      failed: `timed out after ${opts.timeoutMs / 1000} s waiting for hook ${type.kind} ${name}`,
    };
  return { done: false, ageMs };
}

interface JobLike extends KubeObject {
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    phase?: string;
  };
}

/**
 * The hook as the cluster has it: from the release's informer of its kind (no request), or read
 * when there is no informer, or when the informer has not yet seen the object this run created.
 */
async function liveOf(
  client: KubeClient,
  obj: HookObject,
  opts: HookRunOptions,
  name: string,
  cache: Informer<KubeObject> | undefined,
): Promise<KubeObject | undefined> {
  const made = opts.memory.createdUid(opts.release, opts.runId, name);
  if (cache) {
    const cached = cache.get(objectKey(obj.object));
    if (made === undefined || cached?.metadata.uid === made) return cached;
  }
  const { name: n, namespace } = obj.object.metadata;
  return client.getOrUndefined(obj.type, n!, namespace);
}

function stamped(o: KubeObject, runId: string): KubeObject {
  return {
    ...o,
    metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [GitLabHookRunAnnotation]: runId } },
  };
}

function inNamespace(rendered: KubeObject, owner: KubeObject): KubeObject {
  return {
    ...rendered,
    metadata: { ...rendered.metadata, namespace: rendered.metadata.namespace ?? owner.metadata.namespace },
  };
}

/**
 * The object to create: in the owner's namespace unless the chart says otherwise. Not owned: a
 * hook outlives the GitLabCore unless a policy deletes it, as a Helm hook outlives its release.
 */
async function objectFor(client: KubeClient, owner: KubeObject, planned: PlannedHook): Promise<HookObject> {
  const rendered = planned.hook.object;
  const type = await client.resources.mapping(rendered.apiVersion, rendered.kind);
  const obj: KubeObject = { ...rendered, metadata: { ...rendered.metadata } };
  if (type.namespaced) obj.metadata.namespace ??= owner.metadata.namespace;
  else delete obj.metadata.namespace;
  return { type, object: obj };
}

/** Deletes this very object (a newer one of the same name is left alone), its pods in the background. */
async function deleteLive(client: KubeClient, type: ResourceType, live: KubeObject): Promise<void> {
  try {
    await client.delete(type, live.metadata.name!, live.metadata.namespace, {
      preconditions: live.metadata.uid ? { uid: live.metadata.uid } : undefined,
      propagationPolicy: "Background",
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/**
 * Deletes the hooks a policy names, in the order given, without waiting for them to go: nothing
 * later in the pass needs them gone, and the next run's before-hook-creation handles a straggler.
 */
async function removeAll(
  client: KubeClient,
  which: readonly PlannedHook[],
  hooks: readonly PlannedHook[],
  objects: readonly (HookObject | undefined)[],
  opts: HookRunOptions,
): Promise<string[]> {
  const deleted: string[] = [];
  for (const planned of which) {
    const obj = objects[hooks.indexOf(planned)];
    if (!obj) continue;
    const name = describeObject(obj.object);
    try {
      const live = await liveOf(client, obj, opts, name, opts.live ? await opts.live(obj.type) : undefined);
      if (!live || live.metadata.annotations?.[GitLabHookRunAnnotation] !== opts.runId) continue;
      await deleteLive(client, obj.type, live);
      deleted.push(name);
      opts.log.info({ hook: name }, "hook deleted");
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      opts.log.warn({ hook: name, err: errorMessage(e) }, "could not delete the hook");
    }
  }
  return deleted;
}
