import type { KubeClient } from "../../../runtime/client.js";
import type { GroupKind } from "../../../runtime/ownership.js";
import {
  type InventoryItem,
  type InventoryKind,
  inventoryId,
  listInventory,
  type PruneResult,
  prune,
} from "../../../runtime/prune.js";
import { releaseSelector } from "../apply/plan.js";
import { parseKindKey } from "../apply/rendered.js";

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

export interface PruneReleaseOptions {
  release: { name: string; namespace: string };
  /** Kinds to list: those recorded by the last pass and those of this render, so a dropped kind is seen. */
  kinds: Iterable<string>;
  /** Inventory ids of everything this render still wants. */
  keep: Set<string>;
  /** Where namespaced kinds are listed; [] lists cluster-scoped kinds only (deletion). */
  namespaces: string[];
  signal?: AbortSignal;
}

/**
 * Deletes what carries the release labels but the render no longer produces, one object at a time
 * with a uid precondition. PVCs, PVs, VolumeSnapshots and Secrets are never deleted.
 */
export async function pruneRelease(client: KubeClient, opts: PruneReleaseOptions): Promise<PruneResult> {
  const inventory = await listInventory(client, inventoryKinds(opts.kinds), {
    labelSelector: releaseSelector(opts.release),
    namespaces: opts.namespaces,
  });
  return prune(client, inventory, { keep: opts.keep, neverPrune: NEVER_PRUNE, signal: opts.signal });
}

/** What {@link pruneRelease} would delete, without deleting anything (observe-only). */
export async function prunable(client: KubeClient, opts: PruneReleaseOptions): Promise<InventoryItem[]> {
  const inventory = await listInventory(client, inventoryKinds(opts.kinds), {
    labelSelector: releaseSelector(opts.release),
    namespaces: opts.namespaces,
  });
  const never = new Set(NEVER_PRUNE.map((gk) => `${gk.group}/${gk.kind}`));
  return inventory.items.filter(
    ({ type, metadata }) =>
      !opts.keep.has(inventoryId(type, metadata, type.namespaced)) &&
      !never.has(`${type.group}/${type.kind}`) &&
      !metadata.deletionTimestamp,
  );
}
