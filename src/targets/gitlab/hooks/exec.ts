import type { KubeClient } from "../../../runtime/client.js";
import { errorMessage, isNotFound } from "../../../runtime/errors.js";
import type { Logger } from "../../../runtime/log.js";
import { setControllerReference } from "../../../runtime/ownership.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { describeObject, poll, redactedError, waitUntilGone } from "../apply/objects.js";
import { FIELD_MANAGER } from "../apply/plan.js";
import type { PlannedHook } from "./plan.js";

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
}

/** Thrown inside a hook run: the hook's own failure, as opposed to an API error. */
class HookFailed extends Error {}

/**
 * Runs the planned hooks one after another: each is created (an older object of its name first
 * removed under before-hook-creation), waited for when it is a Job or a Pod, and deleted as its
 * policy says. Hooks carry the owner as controller, so whatever a policy keeps goes with it, but no
 * release labels: they are not part of the release, and prune must never see them.
 */
export async function runHooks(
  client: KubeClient,
  owner: KubeObject,
  hooks: readonly PlannedHook[],
  opts: HookRunOptions,
): Promise<HookRunReport> {
  const report: HookRunReport = { ran: [] };
  for (const planned of hooks) {
    opts.signal?.throwIfAborted();
    const rendered = planned.hook.object;
    const name = describeObject({
      ...rendered,
      metadata: { ...rendered.metadata, namespace: rendered.metadata.namespace ?? owner.metadata.namespace },
    });
    if (opts.dryRun) {
      report.ran.push(name);
      continue;
    }
    try {
      await runOne(client, owner, planned, opts);
      report.ran.push(name);
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      const error = e instanceof HookFailed ? e.message : redactedError(rendered, e);
      report.failed = { hook: name, error };
      return report;
    }
  }
  return report;
}

async function runOne(client: KubeClient, owner: KubeObject, planned: PlannedHook, opts: HookRunOptions) {
  const rendered = planned.hook.object;
  const type = await client.resources.mapping(rendered.apiVersion, rendered.kind);
  const obj: KubeObject = { ...rendered, metadata: { ...rendered.metadata } };
  if (type.namespaced) {
    obj.metadata.namespace ??= owner.metadata.namespace;
    if (obj.metadata.namespace === owner.metadata.namespace) setControllerReference(owner, obj);
  } else delete obj.metadata.namespace;
  const { name, namespace } = obj.metadata;
  if (planned.deletePolicies.includes("before-hook-creation")) await remove(client, type, obj, opts.signal);
  await client.apply(type, obj, { fieldManager: FIELD_MANAGER, force: true, signal: opts.signal });
  opts.log.info({ hook: describeObject(obj), weight: planned.hook.weight }, "hook started");
  let failure: string | undefined;
  try {
    await waitForHook(client, type, name!, namespace, opts);
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    failure = e instanceof HookFailed ? e.message : errorMessage(e);
  }
  const policy = failure ? "hook-failed" : "hook-succeeded";
  if (planned.deletePolicies.includes(policy)) {
    await remove(client, type, obj, opts.signal).catch((e: unknown) =>
      opts.log.warn({ hook: describeObject(obj), err: errorMessage(e) }, "could not delete the hook"),
    );
  }
  if (failure) throw new HookFailed(failure);
  opts.log.info({ hook: describeObject(obj) }, "hook completed");
}

/** Deletes the object (pods of a Job too, in the background) and waits until it is gone. */
async function remove(client: KubeClient, type: ResourceType, obj: KubeObject, signal?: AbortSignal) {
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
