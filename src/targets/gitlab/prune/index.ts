import type { KubeClient } from "../../../runtime/client.js";
import type { GroupKind } from "../../../runtime/ownership.js";
import {
  type Inventory,
  type InventoryItem,
  type InventoryKind,
  inventoryId,
  listInventory,
  type PruneResult,
  prune,
} from "../../../runtime/prune.js";
import { NoKindMatchError } from "../../../runtime/restmapper.js";
import type { ResourceType } from "../../../runtime/types.js";
import type { LiveObjects } from "../apply/live.js";
import { releaseLabels, releaseSelector } from "../apply/plan.js";
import { parseKindKey } from "../apply/rendered.js";
import { compareBytes, compareKinds, type KindOrder } from "../render/kind-order.js";
import { HOOK_ANNOTATION } from "../render/manifests.js";
import { BATCHED_CHECK_LABEL } from "../status/version.js";

/** Kinds that hold data or keys: a render that stops producing one never deletes it. */
export const NEVER_PRUNE: GroupKind[] = [
  { group: "", kind: "PersistentVolumeClaim" },
  { group: "", kind: "PersistentVolume" },
  { group: "snapshot.storage.k8s.io", kind: "VolumeSnapshot" },
  { group: "", kind: "Secret" },
];

/** Recorded `<apiVersion>/<Kind>` entries as inventory kinds; entries that cannot be one are dropped. */
export function inventoryKinds(recorded: Iterable<string>): InventoryKind[] {
  const out: InventoryKind[] = [];
  const seen = new Set<string>();
  for (const key of recorded) {
    if (seen.has(key)) continue;
    seen.add(key);
    const k = parseKindKey(key);
    if (k) out.push(k);
  }
  return out;
}

/**
 * The release's objects in the cluster, hooks left out: a hook a policy keeps (no policy, or
 * before-hook-creation alone) is not part of the release, as in Helm, so a render that does not
 * produce it among its objects must not delete it. Hooks still carry the release labels the render
 * stamps on everything (but no owner reference: deleting the GitLabCore leaves them too).
 */
async function releaseInventory(client: KubeClient, opts: PruneReleaseOptions): Promise<Inventory> {
  const inventory =
    (opts.live ? await cachedInventory(client, opts.live, opts) : undefined) ??
    (await listInventory(client, inventoryKinds(opts.kinds), {
      labelSelector: releaseSelector(opts.release),
      namespaces: opts.namespaces,
    }));
  const order = opts.order ?? "install";
  return {
    ...inventory,
    // Nor is a batched background migrations wait Job: the one the operator provides for an old
    // chart is no rendered object, and the chart's own is rendered by upgrade steps only (both are
    // owned by the GitLabCore, so deleting it removes them).
    items: inventory.items
      .filter(
        (i) =>
          i.metadata.annotations?.[HOOK_ANNOTATION] === undefined &&
          i.metadata.labels?.[BATCHED_CHECK_LABEL] === undefined,
      )
      .sort((a, b) => compareInventoryItems(a, b, order)),
  };
}

/**
 * Helm's deletion order: by kind in the given order (unlisted kinds last, by kind name), then by
 * namespace and name so a run is reproducible (Helm goes by its stored manifest there, which an
 * inventory listed from the cluster does not have).
 */
export function compareInventoryItems(a: InventoryItem, b: InventoryItem, order: KindOrder): number {
  return (
    compareKinds(a.type.kind, b.type.kind, order) ||
    compareBytes(a.type.group, b.type.group) ||
    compareBytes(a.metadata.namespace ?? "", b.metadata.namespace ?? "") ||
    compareBytes(a.metadata.name ?? "", b.metadata.name ?? "")
  );
}

/** The same inventory from the release's informers: no request. Undefined when a kind has no cache. */
async function cachedInventory(
  client: KubeClient,
  live: LiveObjects,
  opts: PruneReleaseOptions,
): Promise<Inventory | undefined> {
  const items: InventoryItem[] = [];
  const unserved: InventoryKind[] = [];
  const seen = new Set<string>();
  const labels = releaseLabels(opts.release);
  const namespaces = new Set(opts.namespaces);
  for (const k of inventoryKinds(opts.kinds)) {
    let type: ResourceType;
    try {
      type = await client.resources.mapping(k.apiVersion, k.kind);
    } catch (e) {
      if (e instanceof NoKindMatchError) {
        unserved.push(k);
        continue;
      }
      throw e;
    }
    const id = `${type.group}/${type.plural}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const cache = await live(type);
    if (!cache) return undefined;
    for (const o of cache.list()) {
      if (type.namespaced && !namespaces.has(o.metadata.namespace ?? "")) continue;
      if (Object.entries(labels).some(([key, v]) => o.metadata.labels?.[key] !== v)) continue;
      items.push({ type, metadata: o.metadata });
    }
  }
  return { items, unserved };
}

export interface PruneReleaseOptions {
  /** The release's informers: the inventory is read from them instead of listed. */
  live?: LiveObjects;
  release: { name: string; namespace: string };
  /** Kinds to list: those recorded by the last pass and those of this render, so a dropped kind is seen. */
  kinds: Iterable<string>;
  /** Inventory ids of everything this render still wants. */
  keep: Set<string>;
  /** Where namespaced kinds are listed; [] lists cluster-scoped kinds only (deletion). */
  namespaces: string[];
  /**
   * The kind order deletions follow. Install order (default) is how a Helm upgrade deletes what
   * the new render dropped: in the previous release manifest's order. Uninstall order is how Helm
   * deletes a release: webhook configurations first, workloads before what they depend on.
   */
  order?: KindOrder;
  signal?: AbortSignal;
}

/**
 * Deletes what carries the release labels but the render no longer produces, one object at a time
 * with a uid precondition. PVCs, PVs, VolumeSnapshots and Secrets are never deleted.
 */
export async function pruneRelease(client: KubeClient, opts: PruneReleaseOptions): Promise<PruneResult> {
  const inventory = await releaseInventory(client, opts);
  return prune(client, inventory, { keep: opts.keep, neverPrune: NEVER_PRUNE, signal: opts.signal });
}

/** What {@link pruneRelease} would delete, without deleting anything (observe-only). */
export async function prunable(client: KubeClient, opts: PruneReleaseOptions): Promise<InventoryItem[]> {
  const inventory = await releaseInventory(client, opts);
  const never = new Set(NEVER_PRUNE.map((gk) => `${gk.group}/${gk.kind}`));
  return inventory.items.filter(
    ({ type, metadata }) =>
      !opts.keep.has(inventoryId(type, metadata, type.namespaced)) &&
      !never.has(`${type.group}/${type.kind}`) &&
      !metadata.deletionTimestamp,
  );
}
