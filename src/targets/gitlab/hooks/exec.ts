import type { KubeClient } from "../../../runtime/client.js";
import { errorMessage, isNotFound } from "../../../runtime/errors.js";
import type { Logger } from "../../../runtime/log.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { describeObject, poll, redactedError, waitUntilGone } from "../apply/objects.js";
import { FIELD_MANAGER } from "../apply/plan.js";
import { deletionsAfterFailure, deletionsAfterSuccess, hasPolicy, type PlannedHook } from "./plan.js";

export interface HookRunOptions {
  /** How long one hook (a Job, a Pod) may take before the pass fails. */
  timeoutMs: number;
  signal?: AbortSignal;
  log: Logger;
  /** Observe-only: report what would run, create nothing. */
  dryRun?: boolean;
}

export interface HookRunReport {
  /** Hooks run, in order ("Kind namespace/name"). */
  ran: string[];
  /** The first hook that failed, and why (the rest did not run). */
  failed?: { hook: string; error: string };
  /** Hooks deleted by their policy after the event ("Kind namespace/name"), in order. */
  deleted: string[];
}

/** Thrown inside a hook run: the hook's own failure, as opposed to an API error. */
class HookFailed extends Error {}

/**
 * Runs one event's planned hooks as Helm's execHook does. Each hook in turn: its previous object
 * removed under before-hook-creation, created, waited for (a Job to completion, a Pod to success,
 * anything else is done once created). When one fails: it is deleted if it says hook-failed, the
 * hooks that succeeded before it are deleted if they say hook-succeeded, and the rest never run.
 * Only when every hook succeeded are the hook-succeeded ones deleted, last first, so a ConfigMap
 * hook that a later Job mounts is there until that Job is done. A hook with neither policy stays.
 * As in Helm, what a hook creates is not part of the release: it carries no owner reference, so
 * deleting the GitLabCore leaves what the policies keep (Helm's uninstall leaves it too), and
 * prune never deletes it (see prune/index.ts).
 */
export async function runHooks(
  client: KubeClient,
  owner: KubeObject,
  hooks: readonly PlannedHook[],
  opts: HookRunOptions,
): Promise<HookRunReport> {
  const report: HookRunReport = { ran: [], deleted: [] };
  const created: (HookObject | undefined)[] = [];
  const removeAll = async (which: readonly PlannedHook[], policy: string) => {
    for (const planned of which) {
      const obj = created[hooks.indexOf(planned)];
      if (!obj) continue;
      try {
        await remove(client, obj, opts.signal);
        report.deleted.push(describeObject(obj.object));
        opts.log.info({ hook: describeObject(obj.object), policy }, "hook deleted");
      } catch (e) {
        if (opts.signal?.aborted) throw e;
        opts.log.warn(
          { hook: describeObject(obj.object), err: errorMessage(e) },
          "could not delete the hook",
        );
      }
    }
  };
  for (const [i, planned] of hooks.entries()) {
    opts.signal?.throwIfAborted();
    const name = describeObject(inNamespace(planned.hook.object, owner));
    if (opts.dryRun) {
      report.ran.push(name);
      continue;
    }
    try {
      const obj = await objectFor(client, owner, planned);
      if (hasPolicy(planned, "before-hook-creation")) await remove(client, obj, opts.signal);
      await client.apply(obj.type, obj.object, {
        fieldManager: FIELD_MANAGER,
        force: true,
        signal: opts.signal,
      });
      created[i] = obj;
      opts.log.info({ hook: name, weight: planned.hook.weight }, "hook started");
      const { name: n, namespace } = obj.object.metadata;
      await waitForHook(client, obj.type, n!, namespace, opts);
      opts.log.info({ hook: name }, "hook completed");
      report.ran.push(name);
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      const rendered = planned.hook.object;
      const error = e instanceof HookFailed ? e.message : redactedError(rendered, e);
      report.failed = { hook: name, error };
      // A hook that could not even be created leaves nothing to delete (Helm returns at once).
      if (created[i]) await removeAll(deletionsAfterFailure(hooks, i), "after a failure");
      return report;
    }
  }
  if (!opts.dryRun) await removeAll(deletionsAfterSuccess(hooks), "hook-succeeded");
  return report;
}

/** A hook as created: the object sent and the resource it is of. */
interface HookObject {
  type: ResourceType;
  object: KubeObject;
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

/** Deletes the object (pods of a Job too, in the background) and waits until it is gone. */
async function remove(client: KubeClient, hook: HookObject, signal?: AbortSignal) {
  const { type, object: obj } = hook;
  const live = await client.getOrUndefined(type, obj.metadata.name!, obj.metadata.namespace);
  if (!live?.metadata.uid) return;
  try {
    await client.delete(type, obj.metadata.name!, obj.metadata.namespace, {
      preconditions: { uid: live.metadata.uid },
      propagationPolicy: "Background",
    });
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  await waitUntilGone(client, type, obj.metadata, live.metadata.uid, signal);
}

interface JobLike extends KubeObject {
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    phase?: string;
  };
}

/** A Job until Complete (or Failed), a Pod until Succeeded (or Failed); any other kind is done once created. */
async function waitForHook(
  client: KubeClient,
  type: ResourceType,
  name: string,
  namespace: string | undefined,
  opts: HookRunOptions,
): Promise<void> {
  const isJob = type.group === "batch" && type.kind === "Job";
  const isPod = type.group === "" && type.kind === "Pod";
  if (!isJob && !isPod) return;
  await poll(
    async () => {
      const o = await client.getOrUndefined<JobLike>(type, name, namespace);
      if (!o) throw new HookFailed(`${type.kind} ${name} disappeared before it finished`);
      if (isJob) {
        const c = o.status?.conditions ?? [];
        if (c.some((x) => x.type === "Complete" && x.status === "True")) return true;
        const failed = c.find((x) => x.type === "Failed" && x.status === "True");
        if (failed)
          throw new HookFailed(`Job ${name} failed: ${failed.reason ?? ""} ${failed.message ?? ""}`.trim());
        return undefined;
      }
      if (o.status?.phase === "Succeeded") return true;
      if (o.status?.phase === "Failed") throw new HookFailed(`Pod ${name} failed`);
      return undefined;
    },
    { timeoutMs: opts.timeoutMs, intervalMs: 1000, signal: opts.signal, what: `hook ${type.kind} ${name}` },
  );
}
