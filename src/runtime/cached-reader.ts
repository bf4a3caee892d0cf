import type { KubeClient, WriteNotice } from "./client.js";
import { matchesLabels, parseLabelSelector, type Requirement, selectorWithin } from "./labels.js";
import type { Logger } from "./log.js";
import { cachedReaderLiveReads } from "./metrics.js";
import type { KubeObject, ResourceType } from "./types.js";

/** What the reader needs of a cache: an Informer has all of it. */
export interface ReadableCache {
  readonly type: ResourceType;
  readonly hasSynced: boolean;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly metadataOnly: boolean;
  readonly keepsManagedFields: boolean;
  covers(namespace: string | undefined): boolean;
  get(key: string): KubeObject | undefined;
  list(namespace?: string): KubeObject[];
  /**
   * The cache's own record of this process's writes (an Informer's, own-writes.ts): whether one to
   * `key` has not arrived yet. Where a cache keeps it, it decides instead of the reader's memory.
   */
  ownWritePending?(key: string): boolean;
}

export interface GetOptions {
  /**
   * Labels the object is known to carry when it exists (an intent's own labels): a cache that
   * selects by label can then tell "absent" from "not selected".
   */
  labels?: Record<string, string>;
  /** The answer must keep managedFields (for an apply decided without a request). */
  managedFields?: boolean;
}

export interface ListQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  managedFields?: boolean;
}

export interface CachedReaderOptions {
  /**
   * How long a write of this process is remembered while the cache has not shown it yet (default
   * 60 s): until then reads of that object go to the API server, so a pass reads its own writes.
   */
  writeMemoryMs?: number;
  now?: () => number;
}

interface PendingWrite {
  /** The resourceVersion the server gave our write; undefined for a delete. */
  resourceVersion?: string;
  deleted: boolean;
  at: number;
}

const typeId = (t: ResourceType) => `${t.group}/${t.plural}`;

/**
 * Whether a cached object's resourceVersion is the one a write returned or a later one. Someone
 * else often writes right after us (the StatefulSet controller its status, OpenBao its pod labels),
 * so the watch may never deliver our exact version: waiting for it kept every read of that object,
 * and every list of its kind, going to the API server for the whole write memory. The API server's
 * resourceVersions are etcd revisions, decimal and growing; anything else is compared for equality.
 */
function holdsAtLeast(cached: string | undefined, written: string | undefined): boolean {
  if (cached === undefined || written === undefined) return cached === written;
  if (cached === written) return true;
  const decimal = /^[0-9]{1,30}$/;
  return decimal.test(cached) && decimal.test(written) && BigInt(cached) > BigInt(written);
}

/**
 * Reads by namespace/name and by namespace + label selector, served from the informers a manager
 * already runs, so a pass over unchanged objects costs no request. A 404 of a watched kind is a
 * cache miss, not a request. Kinds no synced informer covers are read from the API server, and the
 * first such read of each kind and scope says so in the log.
 *
 * Own writes: the client tells the reader of every write it made; until the cache holds that
 * write's resourceVersion or a later one (or, for a delete, no longer holds the object), reads of that object —
 * and lists that could contain it — go to the API server. A pass that just created a Secret
 * therefore finds it in the next pass, even when the watch has not delivered it yet.
 */
export class CachedReader {
  private readonly pending = new Map<string, PendingWrite>();
  private readonly toldLive = new Set<string>();
  private readonly stopNotices: () => void;
  private readonly memoryMs: number;
  private readonly now: () => number;

  constructor(
    private readonly client: KubeClient,
    private readonly caches: () => Iterable<ReadableCache>,
    private readonly log: Logger,
    opts: CachedReaderOptions = {},
  ) {
    this.memoryMs = opts.writeMemoryMs ?? 60_000;
    this.now = opts.now ?? (() => performance.now());
    this.stopNotices = client.onWrite((w) => this.remember(w));
  }

  /** Stops listening to the client's writes. */
  close(): void {
    this.stopNotices();
  }

  /** The object, or undefined when it does not exist. Never a 404: a watched kind's miss is absence. */
  async get<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    namespace?: string,
    opts: GetOptions = {},
  ): Promise<T | undefined> {
    const ns = type.namespaced ? namespace : undefined;
    const key = ns === undefined ? name : `${ns}/${name}`;
    const cache = this.cacheFor(type, ns, (c) => this.servesGet(c, name, opts));
    if (!cache) {
      this.sayLive(type, ns, "get");
      cachedReaderLiveReads.inc({ resource: type.plural, verb: "get", reason: "uncovered" });
      return this.client.getOrUndefined<T>(type, name, ns);
    }
    const hit = cache.get(key);
    if (this.stale(type, key, hit, cache)) {
      cachedReaderLiveReads.inc({ resource: type.plural, verb: "get", reason: "own-write" });
      return this.client.getOrUndefined<T>(type, name, ns);
    }
    return hit as T | undefined;
  }

  /** The objects of a namespace (all namespaces when undefined) that match the selectors. */
  async list<T extends KubeObject = KubeObject>(type: ResourceType, query: ListQuery = {}): Promise<T[]> {
    const ns = type.namespaced ? query.namespace : undefined;
    const wanted = parseLabelSelector(query.labelSelector);
    const cache = this.cacheFor(type, ns, (c) => this.servesList(c, wanted, query));
    const live = async () =>
      (
        await this.client.list<T>(type, {
          ...(ns !== undefined ? { namespace: ns } : {}),
          ...(query.labelSelector ? { labelSelector: query.labelSelector } : {}),
          ...(query.fieldSelector ? { fieldSelector: query.fieldSelector } : {}),
        })
      ).items;
    if (!cache) {
      this.sayLive(type, ns, "list");
      cachedReaderLiveReads.inc({ resource: type.plural, verb: "list", reason: "uncovered" });
      return live();
    }
    const items = cache.list(ns).filter((o) => matchesLabels(wanted, o.metadata.labels));
    if (this.listStale(type, ns, cache)) {
      cachedReaderLiveReads.inc({ resource: type.plural, verb: "list", reason: "own-write" });
      return live();
    }
    return items as T[];
  }

  /** Whether a synced cache answers reads of this kind in this namespace (tests, logs). */
  watches(type: ResourceType, namespace?: string, opts: GetOptions = {}): boolean {
    const ns = type.namespaced ? namespace : undefined;
    return (
      this.cacheFor(type, ns, (c) => c.labelSelector === undefined || this.labelsMatch(c, opts)) !== undefined
    );
  }

  private cacheFor(
    type: ResourceType,
    namespace: string | undefined,
    fits: (c: ReadableCache) => boolean,
  ): ReadableCache | undefined {
    let best: ReadableCache | undefined;
    for (const c of this.caches()) {
      if (c.type.group !== type.group || c.type.plural !== type.plural) continue;
      if (!c.hasSynced || c.metadataOnly || !c.covers(namespace) || !fits(c)) continue;
      // Prefer the cache that keeps the least: any fitting one gives the same answer.
      if (!best || (best.keepsManagedFields && !c.keepsManagedFields)) best = c;
    }
    return best;
  }

  private labelsMatch(c: ReadableCache, opts: GetOptions): boolean {
    if (!c.labelSelector) return true;
    return opts.labels !== undefined && matchesLabels(parseLabelSelector(c.labelSelector), opts.labels);
  }

  private servesGet(c: ReadableCache, name: string, opts: GetOptions): boolean {
    if (opts.managedFields && !c.keepsManagedFields) return false;
    if (c.fieldSelector && c.fieldSelector !== `metadata.name=${name}`) return false;
    return this.labelsMatch(c, opts);
  }

  private servesList(c: ReadableCache, wanted: Requirement[], query: ListQuery): boolean {
    if (query.managedFields && !c.keepsManagedFields) return false;
    if ((c.fieldSelector ?? "") !== (query.fieldSelector ?? "")) return false;
    return selectorWithin(wanted, parseLabelSelector(c.labelSelector));
  }

  private remember(w: WriteNotice): void {
    const key = `${typeId(w.type)}|${w.namespace === undefined ? w.name : `${w.namespace}/${w.name}`}`;
    const rv = w.object?.metadata?.resourceVersion;
    const now = this.now();
    // Re-inserted so the map stays in write order: expired entries are then all at its start, and a
    // manager whose target never reads through the reader keeps only the last minute of writes.
    this.pending.delete(key);
    this.pending.set(key, { deleted: w.deleted === true, at: now, ...(rv ? { resourceVersion: rv } : {}) });
    for (const [k, p] of this.pending) {
      if (now - p.at <= this.memoryMs) break;
      this.pending.delete(k);
    }
  }

  /**
   * Whether a write of ours to `key` is newer than what the cache holds; forgets writes it shows.
   * A cache that records this process's writes itself answers for them one by one, without ordering
   * resourceVersions: the answers of concurrent writes to one object can come back out of order,
   * and the last answer is then not the newest write.
   */
  private stale(
    type: ResourceType,
    key: string,
    cached: KubeObject | undefined,
    cache: ReadableCache,
  ): boolean {
    const id = `${typeId(type)}|${key}`;
    const p = this.pending.get(id);
    if (!p) return false;
    const shown = p.deleted
      ? cached === undefined
      : cache.ownWritePending
        ? !cache.ownWritePending(key)
        : holdsAtLeast(cached?.metadata.resourceVersion, p.resourceVersion);
    if (shown || this.now() - p.at > this.memoryMs) {
      this.pending.delete(id);
      return false;
    }
    return true;
  }

  private listStale(type: ResourceType, namespace: string | undefined, cache: ReadableCache): boolean {
    const prefix = `${typeId(type)}|`;
    let stale = false;
    for (const id of [...this.pending.keys()]) {
      if (!id.startsWith(prefix)) continue;
      const key = id.slice(prefix.length);
      if (namespace !== undefined && !key.startsWith(`${namespace}/`)) continue;
      if (this.stale(type, key, cache.get(key), cache)) stale = true;
    }
    return stale;
  }

  private sayLive(type: ResourceType, namespace: string | undefined, verb: string): void {
    const id = `${typeId(type)}|${namespace ?? "*"}|${verb}`;
    if (this.toldLive.has(id)) return;
    this.toldLive.add(id);
    this.log.info(
      { resource: type.plural, namespace: namespace ?? "(all)", verb },
      "no synced informer covers these reads: they go to the API server",
    );
  }
}

/** Reads with no cache at all, for code run outside a manager (one-shot commands, tests of one call). */
export function liveReader(client: KubeClient): Pick<CachedReader, "get" | "list"> {
  return {
    get: (type, name, namespace) =>
      client.getOrUndefined(type, name, type.namespaced ? namespace : undefined),
    list: async (type, query = {}) => {
      const { managedFields: _, ...rest } = query;
      return (await client.list(type, rest)).items as never;
    },
  };
}
