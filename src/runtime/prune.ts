import type { KubeClient } from "./client.js";
import { errorMessage, isConflict, isNotFound } from "./errors.js";
import { type GroupKind, groupOf } from "./ownership.js";
import { NoKindMatchError } from "./restmapper.js";
import type { KubeObject, ResourceType } from "./types.js";

/** A kind as recorded in an inventory (e.g. a status field listing what was applied). */
export interface InventoryKind {
  apiVersion: string;
  kind: string;
}

/** One object found by the inventory: its type and its metadata only. */
export interface InventoryItem {
  type: ResourceType;
  metadata: KubeObject["metadata"];
}

export interface InventoryOptions {
  /** Selects the objects that belong to the owner, e.g. a release label. Required: prune never lists everything. */
  labelSelector: string;
  /**
   * Namespaces in which namespaced kinds are listed; undefined lists them in every namespace.
   * Cluster-scoped kinds are always listed cluster-wide.
   */
  namespaces?: string[];
  pageSize?: number;
}

export interface Inventory {
  items: InventoryItem[];
  /** Recorded kinds the server no longer serves (a CRD removed): nothing of them can be listed. */
  unserved: InventoryKind[];
}

/**
 * Lists, by label selector, every object of the recorded kinds: namespaced kinds in each given
 * namespace, cluster-scoped kinds once. Objects come as PartialObjectMetadata, so an inventory over
 * many kinds holds names, labels, owners and uids, never whole objects.
 */
export async function listInventory(
  client: KubeClient,
  kinds: InventoryKind[],
  opts: InventoryOptions,
): Promise<Inventory> {
  if (!opts.labelSelector.trim())
    throw new Error("inventory.labelSelector: must not be empty; prune would otherwise see every object");
  const items: InventoryItem[] = [];
  const unserved: InventoryKind[] = [];
  const seen = new Set<string>();
  for (const k of kinds) {
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
    // One kind recorded under two versions is one set of objects.
    const id = `${type.group}/${type.plural}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const scopes = type.namespaced && opts.namespaces ? [...new Set(opts.namespaces)] : [undefined];
    for (const namespace of scopes) {
      let cont: string | undefined;
      do {
        const page = await client.listMetadata(type, {
          namespace,
          labelSelector: opts.labelSelector,
          limit: opts.pageSize ?? 500,
          continue: cont,
        });
        for (const o of page.items) items.push({ type, metadata: o.metadata });
        cont = page.metadata.continue || undefined;
      } while (cont);
    }
  }
  return { items, unserved };
}

/** The identity an inventory compares: group, kind, namespace and name (not the version). */
export function inventoryId(
  gk: GroupKind,
  metadata: { namespace?: string; name?: string },
  namespaced = metadata.namespace !== undefined,
): string {
  return `${gk.group}/${gk.kind}/${namespaced ? (metadata.namespace ?? "") : ""}/${metadata.name ?? ""}`;
}

/** The inventory id of a desired object (e.g. a rendered manifest). */
export function inventoryIdOf(obj: KubeObject, namespaced = obj.metadata.namespace !== undefined): string {
  return inventoryId(
    { group: groupOf(obj.apiVersion ?? ""), kind: obj.kind ?? "" },
    obj.metadata,
    namespaced,
  );
}

export interface PruneOptions {
  /** Inventory ids ({@link inventoryIdOf}) of the objects still wanted: they are kept. */
  keep: Set<string>;
  /** Kinds never deleted whatever the inventory says (e.g. PersistentVolumeClaims, Secrets holding keys). */
  neverPrune: GroupKind[];
  /** Background by default; Foreground waits for dependents. */
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** Stops between deletions when aborted. */
  signal?: AbortSignal;
}

export interface PruneResult {
  deleted: InventoryItem[];
  /** Wanted, of a kind never pruned, or already being deleted. */
  kept: InventoryItem[];
  /** Gone already, or replaced by a new object of the same name (uid precondition failed). */
  skipped: InventoryItem[];
  failed: { item: InventoryItem; error: string }[];
}

/**
 * Deletes the inventory's objects that are not wanted any more, one at a time, each with a uid
 * precondition so an object recreated under the same name since the listing is never the one
 * deleted. Kinds in `neverPrune` are kept. A failure is recorded and the rest carry on.
 */
export async function prune(
  client: KubeClient,
  inventory: Inventory,
  opts: PruneOptions,
): Promise<PruneResult> {
  const never = new Set(opts.neverPrune.map((gk) => `${gk.group}/${gk.kind}`));
  const result: PruneResult = { deleted: [], kept: [], skipped: [], failed: [] };
  for (const item of inventory.items) {
    if (opts.signal?.aborted) break;
    const { type, metadata } = item;
    const wanted = opts.keep.has(inventoryId(type, metadata, type.namespaced));
    if (wanted || never.has(`${type.group}/${type.kind}`) || metadata.deletionTimestamp) {
      result.kept.push(item);
      continue;
    }
    if (!metadata.uid) {
      result.failed.push({ item, error: "the listed object has no metadata.uid; not deleting without one" });
      continue;
    }
    try {
      await client.delete(type, metadata.name!, metadata.namespace, {
        preconditions: { uid: metadata.uid },
        propagationPolicy: opts.propagationPolicy ?? "Background",
      });
      result.deleted.push(item);
    } catch (e) {
      if (isNotFound(e) || isConflict(e)) result.skipped.push(item);
      else result.failed.push({ item, error: errorMessage(e) });
    }
  }
  return result;
}
