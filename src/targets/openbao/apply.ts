import { applyIfChanged } from "../../runtime/apply.js";
import { applyWouldBeNoop } from "../../runtime/converge.js";
import { isNotFound } from "../../runtime/errors.js";
import type { Informer } from "../../runtime/informer.js";
import { setControllerReference } from "../../runtime/ownership.js";
import type { KubeObject } from "../../runtime/types.js";
import type { DriftAction, DriftChange } from "./drift.js";
import type { ServiceContext } from "./services.js";

/**
 * What a pass wrote (or would write, observe-only), so a quiet pass can be proven quiet and an
 * observe-only pass can say what a real one would do. `applied` is the log's list; `changes` the
 * same entries sorted by action for the Drifted summary.
 */
export class Writes {
  readonly applied: string[] = [];
  readonly changes: DriftChange[] = [];
  constructor(readonly dryRun: boolean) {}

  record(action: DriftAction, what: string): void {
    this.changes.push({ action, what });
    this.applied.push(`${action} ${what}`);
  }
}

/**
 * Applies one object under the cluster as controller with server-side apply, only when it would
 * change. `live` null says it does not exist; undefined has the reader find it (from a cache that
 * keeps managedFields when one is watched), so an unchanged object costs no request at all.
 */
export async function applyOwned(
  ctx: ServiceContext,
  writes: Writes,
  intent: Record<string, unknown>,
  live: KubeObject | undefined | null,
): Promise<KubeObject> {
  const obj = setControllerReference(ctx.owner, intent as unknown as KubeObject);
  let known = live ?? undefined;
  if (live === undefined) {
    const type = await ctx.client.resources.mapping(obj.apiVersion ?? "v1", obj.kind ?? "");
    known = await ctx.reader.get(type, obj.metadata.name!, obj.metadata.namespace, {
      managedFields: true,
      ...(obj.metadata.labels ? { labels: obj.metadata.labels } : {}),
    });
  }
  const out = await applyIfChanged(ctx.client, obj, {
    fieldManager: ctx.fieldManager,
    force: true,
    live: known ?? null,
    dryRun: writes.dryRun,
  });
  if (out.action !== "unchanged")
    writes.record(known ? "update" : "create", `${obj.kind}/${obj.metadata.name}`);
  else if (out.decidedBy === "dryRun" && known) {
    // Each such pass costs a request: worth knowing which field keeps the cheap check from deciding.
    const why = applyWouldBeNoop(obj, known, ctx.fieldManager);
    ctx.log.debug(
      { object: `${obj.kind}/${obj.metadata.name}`, why: why.noop ? "" : why.reason },
      "unchanged, decided by a dry run",
    );
  }
  return out.object;
}

/** Looks an object up in an informer by namespace and name. */
export function cached<T extends KubeObject>(
  inf: Informer<T>,
  namespace: string,
  name: string,
): T | undefined {
  return inf.get(`${namespace}/${name}`);
}

/**
 * Deletes an object this cluster made and no longer wants (a Secret of credentials the spec stopped
 * giving, a file that moved to another kind); anything not controlled by the cluster stays.
 * Observe-only records the deletion instead.
 */
export async function removeOwned(
  ctx: ServiceContext,
  writes: Writes,
  obj: { apiVersion: string; kind: string; name: string; namespace: string },
  live?: KubeObject,
): Promise<void> {
  const type = await ctx.client.resources.mapping(obj.apiVersion, obj.kind);
  const found = live ?? (await ctx.reader.get(type, obj.name, obj.namespace));
  const uid = ctx.owner.metadata.uid;
  if (!found?.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid)) return;
  writes.record("delete", `${obj.kind}/${obj.name}`);
  if (writes.dryRun) return;
  await ctx.client
    .delete(type, obj.name, obj.namespace, { preconditions: { uid: found.metadata.uid } })
    .catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
}
