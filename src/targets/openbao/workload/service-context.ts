import type { OpenBaoClusterReasonType } from "../../../apis/openbaocluster-names.js";
import { applyIfChanged } from "../../../runtime/apply.js";
import type { CachedReader } from "../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { ConditionInput } from "../../../runtime/conditions.js";
import { isNotFound } from "../../../runtime/errors.js";
import type { EventInput } from "../../../runtime/events.js";
import type { Logger } from "../../../runtime/log.js";
import { groupOf, isControlledBy, setControllerReference } from "../../../runtime/ownership.js";
import type { KubeObject } from "../../../runtime/types.js";
import type { DriftChange } from "../drift.js";
import { LABEL_CLUSTER } from "../identity.js";
import type { IngressReadiness } from "../services.js";

/**
 * What every workload service of the openbao target gets from the controller: the means to talk to
 * the API server, the owner its objects hang from, and the clock, so services stay testable.
 */
export interface ServiceContext {
  client: KubeClient;
  /** Reads of objects, from the informers' caches where they are watched (writes go to `client`). */
  reader: Pick<CachedReader, "get" | "list">;
  /** The OpenBaoCluster as read from the API server (uid set): the controller of every object made. */
  owner: KubeObject;
  /** Server-side apply field manager of this service. */
  fieldManager: string;
  log: Logger;
  /** An EventRecorder, or anything that records events the same way. */
  events: { record(regarding: KubeObject, e: EventInput): void };
  now: () => Date;
  /** Observe-only: reconcile fully, write nothing, report what would change. */
  observeOnly?: boolean;
}

/** What a service reports back: whether the next step may run, and why not. */
export interface ServiceOutcome {
  ready: boolean;
  /** A CamelCase reason, as used in conditions and events. */
  reason: OpenBaoClusterReasonType;
  message: string;
  /** The condition this service owns, when it owns one (TLSReady for certificates). */
  condition?: ConditionInput;
  /** sha256 of the active server certificate and key, when the operator can see them. */
  activeCertHash?: string;
  /** Epoch ms by which a pass must look again (a certificate due for rotation, or expiring). */
  recheckAt?: number;
  /** Networking: the Gateway API concern, when spec.gateway is enabled. */
  gateway?: { ready: boolean; reason: OpenBaoClusterReasonType; message: string };
  /** Networking: the managed Ingress's integration, when spec.ingress is enabled. */
  ingress?: IngressReadiness;
  /**
   * Objects written or deleted in this pass ("Kind/name created|changed|deleted"), or, in
   * observe-only mode, that would have been. Empty on a quiet pass.
   */
  changes?: string[];
}

/**
 * Server-side apply of one object under the cluster as controller, only when it would change;
 * in observe-only mode a dry run that stores nothing. Records the change in `changes`: observe-only
 * says whether the object would be created or updated, so the live object is read first when the
 * caller has none (the same read applyIfChanged would make).
 */
export async function applyOwned(
  ctx: ServiceContext,
  intent: KubeObject,
  changes: string[],
  live?: KubeObject | null,
): Promise<KubeObject> {
  let known = live;
  if (known === undefined) {
    // From a cache that keeps managedFields when the kind is watched: an unchanged object costs no request.
    const type = await ctx.client.resources.mapping(intent.apiVersion ?? "v1", intent.kind ?? "");
    known =
      (await ctx.reader.get(type, intent.metadata.name!, intent.metadata.namespace, {
        managedFields: true,
        ...(intent.metadata.labels ? { labels: intent.metadata.labels } : {}),
      })) ?? null;
  }
  const out = await applyIfChanged(ctx.client, setControllerReference(ctx.owner, intent), {
    fieldManager: ctx.fieldManager,
    force: true,
    ...(ctx.observeOnly ? { dryRun: true } : {}),
    live: known,
  });
  if (out.action === "dry-run")
    changes.push(`${intent.kind}/${intent.metadata.name} would be ${known ? "updated" : "created"}`);
  else if (out.action !== "unchanged") changes.push(`${intent.kind}/${intent.metadata.name} applied`);
  return out.object;
}

/**
 * Deletes one object this cluster controls and no longer wants (an optional object no longer asked
 * for, an object under a name from before): read from the cache by the cluster's label, so a quiet
 * pass costs nothing; anything not controlled by this cluster stays. Observe-only says it would.
 */
export async function deleteIfOwned(
  ctx: ServiceContext,
  obj: { apiVersion: string; kind: string; name: string; namespace: string },
  changes: string[],
  /** Deletes only a live object this accepts (e.g. a Service of the wrong type for its name). */
  when: (live: KubeObject) => boolean = () => true,
): Promise<boolean> {
  // A kind whose CRD went (or never came) has nothing left to delete.
  const type = await ctx.client.resources.find(obj.apiVersion, obj.kind);
  if (!type) return false;
  const live = await ctx.reader.get(type, obj.name, obj.namespace, {
    labels: { [LABEL_CLUSTER]: ctx.owner.metadata.name ?? "" },
  });
  const owner = {
    group: groupOf(ctx.owner.apiVersion ?? ""),
    kind: ctx.owner.kind ?? "",
    uid: ctx.owner.metadata.uid ?? "",
  };
  if (!live || !isControlledBy(live, owner) || !when(live)) return false;
  if (ctx.observeOnly) {
    changes.push(`${obj.kind}/${obj.name} would be deleted`);
    return true;
  }
  await ctx.client
    .delete(type, obj.name, obj.namespace, { preconditions: { uid: live.metadata.uid } })
    .catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
  changes.push(`${obj.kind}/${obj.name} deleted`);
  ctx.log.info({ kind: obj.kind, name: obj.name }, "deleted an object this cluster no longer wants");
  return true;
}

/** A service's change line ("Service/x would be created", "Ingress/y deleted") as a drift entry. */
export function driftOfChange(line: string): DriftChange | undefined {
  const m = /^(\S+) (?:would be )?(created|updated|applied|deleted)$/.exec(line);
  if (!m) return undefined;
  const verb = m[2]!;
  const action = verb === "deleted" ? "delete" : verb === "created" ? "create" : "update";
  return { action, what: m[1]! };
}
