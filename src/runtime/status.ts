import { canonicalJson } from "./canonical-json.js";
import type { KubeClient } from "./client.js";
import { sameConditions } from "./conditions.js";
import { ApiError, isConflict, isNotFound } from "./errors.js";
import type { InformerHandler } from "./informer.js";
import type { OwnWrites } from "./own-writes.js";
import type { KubeObject, ResourceType } from "./types.js";

/**
 * The one way controllers write status. Two modes:
 * - `StatusWriter.write`: one concern's fields applied (server-side apply, forced: the concern is
 *   their only writer) when they differ from what the freshest known copy holds;
 * - `casStatus`: read-decide-apply with the read's resourceVersion as a precondition, for fields
 *   several writers decide together (a lock), where no decision may rest on a stale copy.
 */

type WithStatus<S> = KubeObject & { status?: S };

export interface StatusWriterOptions<S> {
  client: KubeClient;
  type: ResourceType;
  /** One field manager per concern: its apply owns exactly the fields it sends. */
  fieldManager: string;
  /**
   * The concern's own fields of a full status, for the comparison: other writers' fields never
   * make a write of this one look due. Default: the whole status.
   */
  plane?: (status: S | undefined) => unknown;
  /**
   * The cache the written objects are read from (the controller's informer). The memory of a
   * written status then goes as soon as the cache's watch delivers that write, not at the object's
   * next pass (a resync away: a seed of n objects would hold n statuses until then), and with the
   * object when it goes; and whether the cache is behind is asked of the cache's own-write record
   * (resourceVersions compared for equality only) instead of by comparing resourceVersions.
   */
  cache?: StatusCache;
}

/** What the writer needs of a cache: an Informer has all of it. */
export interface StatusCache {
  addHandler(h: InformerHandler<KubeObject>): void;
  get(key: string): KubeObject | undefined;
  readonly ownWrites?: Pick<OwnWrites, "waitsFor" | "receivedBefore">;
}

/**
 * One kind watched by several informers (one per namespace scope, which may overlap) as one cache:
 * an object is read from the first that holds it, the way the controller reads it; a write is
 * awaited while any of them has not shown it; and the object counts as gone only once none holds it.
 */
export function eitherCache(...caches: StatusCache[]): StatusCache {
  const get = (key: string): KubeObject | undefined => {
    for (const c of caches) {
      const o = c.get(key);
      if (o) return o;
    }
    return undefined;
  };
  return {
    get,
    addHandler(h) {
      for (const c of caches) {
        c.addHandler({
          update: (old, o) => h.update?.(old, o),
          delete: (o) => {
            if (get(keyOf(o)) === undefined) h.delete?.(o);
          },
        });
      }
    },
    ownWrites: {
      waitsFor: (key, rv) => caches.some((c) => c.ownWrites?.waitsFor(key, rv) ?? false),
      // One object's resourceVersions are ordered the same in every watch of it.
      receivedBefore: (key, a, b) => caches.some((c) => c.ownWrites?.receivedBefore(key, a, b) ?? false),
    },
  };
}

/**
 * Writes one concern's status. It remembers what it wrote with the resourceVersion the API server
 * gave it: a pass can start from an informer copy older than that write (a finalizer patch queued
 * one, a watch lags), and planning from it would regress what was recorded. `freshest` gives the
 * newer of the two; the memory goes once the cache has caught up or the name belongs to another
 * object (another uid).
 */
export class StatusWriter<S> {
  private readonly written = new Map<
    string,
    { uid: string; resourceVersion: string; status: S | undefined }
  >();

  constructor(private readonly opts: StatusWriterOptions<S>) {
    const cache = opts.cache;
    if (!cache) return;
    cache.addHandler({
      update: (_old, o) => {
        // What the cache answers, not the event's copy: the memory goes only once a read of the
        // cache returns the written status.
        const key = keyOf(o);
        const cached = cache.get(key);
        if (cached) this.freshest(key, cached as WithStatus<S>);
      },
      delete: (o) => this.forget(keyOf(o)),
    });
  }

  get fieldManager(): string {
    return this.opts.fieldManager;
  }

  /** The cached object, or with the status this writer last wrote when the cache is older. */
  freshest<T extends WithStatus<S>>(key: string, cached: T): T {
    const w = this.written.get(key);
    if (!w) return cached;
    const own = this.opts.cache?.ownWrites;
    // Behind: the cache has not received the write yet, or `cached` is a copy it held before it.
    const rv = cached.metadata.resourceVersion;
    const behind = own
      ? rv !== w.resourceVersion &&
        (own.waitsFor(key, w.resourceVersion) || own.receivedBefore(key, rv, w.resourceVersion))
      : isOlder(rv, w.resourceVersion);
    if (w.uid !== cached.metadata.uid || !behind) {
      this.written.delete(key);
      return cached;
    }
    return { ...cached, status: w.status };
  }

  /** Whether applying `next` would change what `current` holds of this concern. */
  changes(current: S | undefined, next: S): boolean {
    const plane = this.opts.plane ?? ((s: S | undefined) => s ?? {});
    return !sameStatus(plane(current), next);
  }

  /**
   * Applies `next` when it changes the freshest copy of `obj`; `onChange` runs just before the
   * write (the events that tell of it). Returns the object as written, or undefined when nothing
   * was written (unchanged, or the object is gone).
   */
  async write<T extends WithStatus<S>>(
    obj: T,
    next: S,
    opts: { signal?: AbortSignal; onChange?: () => void } = {},
  ): Promise<T | undefined> {
    const key = keyOf(obj);
    const current = this.freshest(key, obj);
    if (!this.changes(current.status, next)) return undefined;
    opts.onChange?.();
    try {
      return await this.apply(obj, next, opts.signal);
    } catch (e) {
      if (isNotFound(e)) {
        this.written.delete(key);
        return undefined;
      }
      throw e;
    }
  }

  /** Applies `next` as this concern's whole plane, changed or not, and remembers the result. */
  async apply<T extends WithStatus<S>>(obj: T, next: S, signal?: AbortSignal): Promise<T> {
    const written = await this.opts.client.applyStatus<T>(
      this.opts.type,
      {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
        status: next,
      },
      { fieldManager: this.opts.fieldManager, force: true, signal },
    );
    this.remember(keyOf(obj), written);
    return written;
  }

  /** Records a write made elsewhere (a conditional write) so `freshest` knows of it. */
  remember(key: string, written: WithStatus<S>): void {
    const { uid, resourceVersion } = written.metadata;
    if (!uid || !resourceVersion) return;
    this.written.set(key, { uid, resourceVersion, status: written.status });
  }

  forget(key: string): void {
    this.written.delete(key);
  }
}

function keyOf(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : `${o.metadata.name}`;
}

/**
 * The one equality of statuses: deep, key order aside, absent and undefined alike, conditions as a
 * set by type (their order carries no meaning).
 */
export function sameStatus(a: unknown, b: unknown): boolean {
  const ca = asRecord(a)?.["conditions"];
  const cb = asRecord(b)?.["conditions"];
  if (Array.isArray(ca) || Array.isArray(cb)) {
    if (!sameConditions(ca as never, cb as never)) return false;
    return canonical(withoutConditions(a)) === canonical(withoutConditions(b));
  }
  return canonical(a) === canonical(b);
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function withoutConditions(v: unknown): unknown {
  const r = asRecord(v);
  if (!r) return v;
  const { conditions: _, ...rest } = r;
  return rest;
}

function canonical(v: unknown): string {
  return canonicalJson(v ?? {}, { loose: true });
}

/**
 * Whether resourceVersion `a` is older than `b`. They are opaque to clients in general; the API
 * server backed by etcd hands out increasing integers, and anything else is never called older.
 */
export function isOlder(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

/** A server-side apply field conflict (another manager owns a field with another value). */
export function isFieldManagerConflict(e: unknown): boolean {
  if (!(e instanceof ApiError) || e.code !== 409) return false;
  const causes = (e.details as { causes?: { type?: string }[] } | undefined)?.causes ?? [];
  return causes.some((c) => c.type === "FieldManagerConflict") || /^Apply failed with/.test(e.message);
}

export interface CasOptions {
  fieldManager: string;
  signal?: AbortSignal;
  /** Read-decide-apply rounds before giving up on a busy object (default 20). */
  maxAttempts?: number;
  /**
   * Called when the apply met a field conflict with another manager. Returning true retries with
   * force (server-side apply conflict recovery); false or absent lets the conflict error through.
   */
  onFieldConflict?: (e: ApiError) => boolean;
  /**
   * The object as the caller read it from the API server moments ago (not from a cache): the first
   * round decides on it instead of reading again. A write since then only costs the lost race.
   */
  firstRead?: KubeObject;
}

export interface CasResult<T, D> {
  /** The decision made on the read that was written (or that needed no write). */
  decision: D;
  /** The object after the write, or as read when nothing was written. */
  object: T;
  wrote: boolean;
  /** Rounds that lost a race to another writer and re-read. */
  retries: number;
  /** The write took fields from another manager (server-side apply conflict recovery). */
  forced: boolean;
}

/**
 * A conditional status write that kept losing to other writers: nothing was written, and the
 * caller's reconcile is requeued to try again (the error is not about the object's content).
 */
export class LostRacesError extends Error {
  override name = "LostRacesError";
}

/**
 * Reads the object fresh, lets `decide` compute the decision and this writer's whole plane from it
 * (or no plane: nothing to write), and applies the plane through the status subresource with the
 * read's resourceVersion as a precondition. A write in between makes the API server answer 409 and
 * the round runs again, so `decide` must be pure.
 */
export async function casStatus<T extends KubeObject, S, D>(
  client: KubeClient,
  type: ResourceType,
  ref: { name: string; namespace?: string },
  decide: (fresh: T) => { decision: D; plane?: S },
  opts: CasOptions,
): Promise<CasResult<T, D>> {
  const max = opts.maxAttempts ?? 20;
  let forced = false;
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    const fresh =
      attempt === 0 && opts.firstRead
        ? (opts.firstRead as T)
        : await client.get<T>(type, ref.name, ref.namespace);
    const { decision, plane } = decide(fresh);
    if (!plane) return { decision, object: fresh, wrote: false, retries: attempt, forced };
    const body = {
      apiVersion: fresh.apiVersion,
      kind: fresh.kind,
      metadata: { name: ref.name, namespace: ref.namespace, resourceVersion: fresh.metadata.resourceVersion },
      status: plane,
    };
    try {
      const written = await client.applyStatus<T>(type, body, {
        fieldManager: opts.fieldManager,
        force: forced,
        signal: opts.signal,
      });
      return { decision, object: written, wrote: true, retries: attempt, forced };
    } catch (e) {
      if (isFieldManagerConflict(e) && !forced && opts.onFieldConflict?.(e as ApiError)) {
        forced = true;
      } else if (!isConflict(e) || isFieldManagerConflict(e)) {
        throw e;
      }
      const where = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
      if (attempt + 1 >= max)
        throw new LostRacesError(
          `${where}: status write under ${opts.fieldManager} lost ${max} races in a row; will retry`,
        );
      // A short random pause keeps writers that collided from colliding again in lockstep.
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 20 * (attempt + 1))));
    }
  }
}

/**
 * Removes status fields with a JSON merge patch under the read's resourceVersion, for the case an
 * apply cannot express: a plane whose removal leaves status empty (server-side apply stores an
 * emptied map as null, which a schema may refuse). `decide` reads the fresh object and names the
 * fields to remove, or none (nothing to write). A lost race re-reads and decides again.
 */
export async function casRemoveStatusFields<T extends KubeObject, D>(
  client: KubeClient,
  type: ResourceType,
  ref: { name: string; namespace?: string },
  decide: (fresh: T) => { decision: D; remove?: readonly string[] },
  opts: { signal?: AbortSignal; maxAttempts?: number } = {},
): Promise<{ decision: D; wrote: boolean }> {
  const max = opts.maxAttempts ?? 20;
  for (let attempt = 0; attempt < max; attempt++) {
    opts.signal?.throwIfAborted();
    const fresh = await client.get<T>(type, ref.name, ref.namespace);
    const { decision, remove } = decide(fresh);
    if (!remove?.length) return { decision, wrote: false };
    try {
      await client.mergePatch(
        type,
        ref.name,
        ref.namespace,
        {
          metadata: { resourceVersion: fresh.metadata.resourceVersion },
          status: Object.fromEntries(remove.map((f) => [f, null])),
        },
        "status",
      );
      return { decision, wrote: true };
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  const where = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  throw new LostRacesError(`${where}: removing status fields lost ${max} races in a row; will retry`);
}

/**
 * Applies `plane` as `fieldManager`'s status with force, conditional on the resourceVersion of
 * `from`: how a writer takes fields another manager co-owns (its next apply can then drop them).
 */
export async function forceApplyStatus<T extends KubeObject, S>(
  client: KubeClient,
  type: ResourceType,
  from: T,
  plane: S,
  opts: { fieldManager: string; signal?: AbortSignal },
): Promise<T> {
  return client.applyStatus<T>(
    type,
    {
      apiVersion: from.apiVersion,
      kind: from.kind,
      metadata: {
        name: from.metadata.name,
        namespace: from.metadata.namespace,
        resourceVersion: from.metadata.resourceVersion,
      },
      status: plane,
    },
    { fieldManager: opts.fieldManager, force: true, signal: opts.signal },
  );
}
