/**
 * One informer: list+watch of one kind per namespace scope, resumed from resourceVersion, relisted
 * on 410 Gone, a quiet watch questioned before it is trusted, and the cache and owner indexes the
 * events keep. One thing in one file because the watch loop, the relist and the cache share the
 * per-scope state (resourceVersion, sync, progress) that each step of the loop reads and moves.
 */
import { setMaxListeners } from "node:events";
import { exponentialDelay, sleep } from "./backoff.js";
import type { KubeClient, Watch, WriteNotice } from "./client.js";
import { errorMessage, isForbidden, isGone, isResourceVersionTooLarge } from "./errors.js";
import { matchesLabels, parseLabelSelector } from "./labels.js";
import type { Logger } from "./log.js";
import { informerRelists } from "./metrics.js";
import { OwnWrites } from "./own-writes.js";
import { type OwnerId, ownerIndexKey, refIndexKey } from "./ownership.js";
import { slimForCache } from "./slim.js";
import { apiVersionOf, type KubeList, type KubeObject, objectKey, type ResourceType } from "./types.js";

const DEFAULT_WATCH_TIMEOUT_SECONDS: [number, number] = [1800, 3600];
/**
 * Silence after which a watch asks whether the server has reached its resourceVersion (see
 * judgeQuiet): past etcd's default progress-notification interval (10 minutes) and the cache's
 * minute between bookmarks, by when a watch of a kind nobody writes has heard a bookmark from a
 * server that is not behind it (etcd's revision moves all the time: Leases, Events).
 */
const DEFAULT_STALE_AFTER_MS = 15 * 60_000;
/**
 * How long a quiet watch's connection may take to answer its ping, as the transport gives a
 * connection under suspicion: a live one answers in a round trip.
 */
const QUIET_PING_TIMEOUT_MS = 3_000;

/**
 * How a namespaced kind limited to some namespaces is watched: one list+watch per namespace, or one
 * cluster-wide list+watch whose objects outside those namespaces are dropped on arrival.
 */
export type WatchScope = "namespaces" | "cluster";

/**
 * What a target's readers never look at in one kind, dropped before the object is cached: declared
 * by the target that asks for the informer (the runtime knows no kind's fields). Named, because
 * informers of one type that prune differently are different caches. `apply` may change the object
 * in place and must keep metadata whole (keys, resourceVersion, owners and labels are what the
 * cache, the reader and server-side apply rely on); what it drops is gone for every read through
 * the manager's reader, so a target declares only fields none of its code reads from a cache.
 */
export interface CachePruning {
  readonly name: string;
  apply(obj: KubeObject): KubeObject;
}

export interface InformerOptions {
  /** Only these namespaces are seen; undefined means all. setNamespaces() changes them at run time. */
  namespaces?: string[];
  /**
   * Decides, once at start, how a namespaced kind limited to `namespaces` is watched (default: one
   * list+watch per namespace). The manager asks the API server whether a cluster-wide watch is allowed.
   */
  chooseScope?: (type: ResourceType, namespaces: string[]) => Promise<WatchScope>;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of the initial list. */
  pageSize?: number;
  /** Retry delays after errors: min doubling to max. */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** The failure count (hence the delay) starts over only after this long without a failure (default 2 min). */
  backoffResetMs?: number;
  /** A watch that ends sooner than this without a single event counts as a failure (default 1 s). */
  minWatchMs?: number;
  /**
   * How often the API server sends a bookmark to a watch that has something to say (about every
   * minute). A watch silent for twice this long (no event, no bookmark) has its connection checked
   * (an HTTP/2 ping; over HTTP/1.1 it is opened again from its resourceVersion): a dead one is
   * replaced, a quiet one kept. Never a list.
   */
  bookmarkIntervalMs?: number;
  /**
   * Silence after which a watch also asks whether the API server has reached its resourceVersion
   * (default 15 minutes), and lists again only if not: a server behind the version sends nothing.
   */
  staleAfterMs?: number;
  /**
   * Server-side watch timeout range (default 30 to 60 minutes, the API server's own default range
   * for a watch that names none); a watch ends and resumes from the last resourceVersion. A dead
   * watch is found by its missing bookmarks and a dead connection by HTTP/2 pings, so the timeout
   * only spreads watches over API servers again: client-go's 5 to 10 minutes re-opened every
   * watch of an idle operator about 7 times an hour for nothing (~25 watches for one cluster).
   */
  watchTimeoutSeconds?: [number, number];
  /**
   * Cache PartialObjectMetadata only (apiVersion meta.k8s.io/v1, the object's metadata): for kinds
   * where names, labels and owners are all that matter, such as a prune inventory.
   */
  metadataOnly?: boolean;
  /** Keep metadata.managedFields, for callers that compare an intent with the live object's fields. */
  keepManagedFields?: boolean;
  /** Fields of this kind the target never reads, dropped on the way in (see CachePruning). */
  prune?: CachePruning;
  /**
   * A cache read from only where RBAC allows it: a refused (403) list or watch stops this informer
   * (logged once), and it never holds readiness or liveness back; readers then ask the API server.
   */
  optional?: boolean;
  log: Logger;
}

export interface InformerHandler<T extends KubeObject> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

/**
 * A cache of one resource type, kept current by list+watch.
 *
 * Watches resume from the last resourceVersion seen (bookmarks included), as client-go's reflector
 * does. A 410 Gone, or a resourceVersion the server has not reached ("too large", or found behind
 * by judgeQuiet after long silence), triggers a full relist; nothing else does. Every other error
 * is logged and retried with capped exponential backoff, and so is a watch that closes at once with
 * nothing in it (an API server or proxy closing every watch must not become a hot loop) or whose
 * connection, checked after two bookmark intervals of silence, is dead. A watch that is only quiet
 * is kept, at debug level and without a request (see judgeQuiet).
 * The failure count starts over only after a healthy period, so a watch that flaps keeps its
 * delay. The loop only ends when the informer is stopped. managedFields are dropped on the way in because no
 * reconciler reads them and they roughly double an object's size (unless keepManagedFields), and so
 * is whatever the target's pruning of the kind names.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly store = new Map<string, T>();
  /** Whether the target's pruning has thrown once (said once, then quietly skipped per object). */
  private pruneFailed = false;
  private readonly ownerIndex = new Map<string, Set<string>>();
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly scopesSynced = new Set<string>();
  private readonly syncWaiters: (() => void)[] = [];
  private abort?: AbortController;
  private starting?: Promise<void>;
  /** Set once the scope is chosen and the first loops run. */
  private begun = false;
  /** Loops of namespaces removed at run time, still winding down; stop() waits for them too. */
  private readonly retired = new Set<Promise<void>>();
  /** One list+watch loop per scope (a namespace, or "*" for the whole cluster). */
  private readonly loops = new Map<string, Loop>();
  /** The namespaces objects may come from; undefined means all. */
  private namespaces?: Set<string>;
  private mode: WatchScope = "namespaces";
  /** Latched once every scope of the start listed, so a namespace added later cannot unready the process. */
  private synced = false;
  // Per scope, the monotonic time of its last sign of life (a list page, a watch event or bookmark,
  // a watch the server ended on time, a quiet watch's connection answering a ping): what liveness
  // reads to tell a stuck loop from a quiet one.
  private readonly lastProgress = new Map<string, number>();
  private readonly refusedScopes = new Set<string>();
  /** This process's writes to cached objects that the watch has not delivered yet (own-writes.ts). */
  readonly ownWrites = new OwnWrites();
  private stopOwnWrites?: () => void;

  constructor(
    private readonly client: KubeClient,
    readonly type: ResourceType,
    private readonly opts: InformerOptions,
  ) {
    if (type.namespaced && opts.namespaces) this.namespaces = new Set(opts.namespaces);
  }

  /** How this informer watches: per namespace, or one cluster-wide watch (decided at start). */
  get watchScope(): WatchScope {
    return this.mode;
  }

  /** The scopes list+watch loops run for now: namespaces, or "*". */
  get scopes(): string[] {
    return [...this.loops.keys()];
  }

  /**
   * Adds a handler. Objects already cached are replayed to it as adds, as client-go does, so a
   * controller attached to a running informer still hears about everything that exists.
   */
  addHandler(h: InformerHandler<T>): void {
    this.handlers.push(h);
    for (const obj of this.store.values()) this.notify(() => h.add?.(obj));
  }

  start(): void {
    if (this.abort) return;
    this.abort = new AbortController();
    // A client double without write notices (unit tests) has nothing to tell.
    if (typeof this.client.onWrite === "function")
      this.stopOwnWrites = this.client.onWrite((w) => this.noteOwnWrite(w));
    // One listener per namespace loop: hundreds are expected, not a leak.
    setMaxListeners(0, this.abort.signal);
    // Liveness counts from now, also while the scope is being chosen.
    for (const scope of this.wantedScopes()) this.progress(scope);
    this.starting = this.begin(this.abort.signal);
  }

  private async begin(signal: AbortSignal): Promise<void> {
    if (this.namespaces && this.opts.chooseScope) {
      try {
        this.mode = await this.opts.chooseScope(this.type, [...this.namespaces]);
      } catch (e) {
        this.opts.log.warn(
          { err: errorMessage(e), resource: this.type.plural },
          "could not choose how to watch; watching each namespace",
        );
        this.mode = "namespaces";
      }
      this.lastProgress.clear();
      for (const scope of this.wantedScopes()) this.progress(scope);
    }
    if (signal.aborted) return;
    this.begun = true;
    for (const scope of this.wantedScopes()) this.startLoop(scope);
  }

  async stop(): Promise<void> {
    this.abort?.abort();
    this.stopOwnWrites?.();
    await this.starting;
    await Promise.all([...this.loops.values()].map((l) => l.done).concat([...this.retired]));
  }

  /**
   * Changes the namespaces seen, while running: a namespace added is listed and watched (per
   * namespace, its own loop; cluster-wide, the one watch lists again), one removed stops being
   * watched and its objects leave the cache as deletions, so controllers hear of them.
   */
  setNamespaces(namespaces: string[]): void {
    if (!this.type.namespaced) return;
    if (!this.namespaces)
      throw new Error(`informer ${this.type.plural}: watches every namespace; none can be set`);
    const next = new Set(namespaces);
    const added = [...next].filter((ns) => !this.namespaces!.has(ns));
    const removed = [...this.namespaces].filter((ns) => !next.has(ns));
    this.namespaces = next;
    for (const ns of removed) {
      const loop = this.loops.get(ns);
      if (loop) {
        loop.abort.abort();
        this.loops.delete(ns);
        this.retired.add(loop.done);
        void loop.done.finally(() => this.retired.delete(loop.done));
      }
      this.lastProgress.delete(ns);
      this.scopesSynced.delete(ns);
      for (const obj of [...this.store.values()]) if (obj.metadata.namespace === ns) this.remove(obj);
    }
    // Not started, or still choosing its scope: begin() starts the loops the namespaces now call for.
    if (!this.begun || this.abort?.signal.aborted) return;
    if (this.mode === "cluster") {
      if (added.length > 0) {
        // Not complete for the added namespaces until the one watch has listed again (covers()).
        this.scopesSynced.delete("*");
        this.loops.get("*")?.relist();
      }
      return;
    }
    for (const ns of added) {
      this.progress(ns);
      this.startLoop(ns);
    }
  }

  private wantedScopes(): string[] {
    if (!this.namespaces || this.mode === "cluster") return ["*"];
    return [...this.namespaces];
  }

  private startLoop(scope: string): void {
    if (this.loops.has(scope) || !this.abort) return;
    const abort = new AbortController();
    const outer = this.abort.signal;
    const onOuter = () => abort.abort();
    outer.addEventListener("abort", onOuter, { once: true });
    const loop: Loop = {
      abort,
      relistWanted: false,
      relist() {
        this.relistWanted = true;
        this.watch?.abort();
      },
      done: Promise.resolve(),
    };
    loop.done = this.run(scope === "*" ? undefined : scope, loop).finally(() =>
      outer.removeEventListener("abort", onOuter),
    );
    this.loops.set(scope, loop);
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /**
   * Whether this process wrote `key` and the watch has not delivered that write yet: the cached
   * copy is then older than what this process knows the object to be.
   */
  ownWritePending(key: string): boolean {
    return this.ownWrites.pending(key);
  }

  /**
   * Records a write of this process's client to an object of this kind that the cache would hold.
   * Deletes are not waited for (a delete with finalizers leaves the object in place); writes to
   * objects outside the cache's selection never arrive, and a field selector cannot be judged here.
   */
  private noteOwnWrite(w: WriteNotice): void {
    if (w.type.group !== this.type.group || w.type.plural !== this.type.plural) return;
    const obj = w.object;
    const rv = obj?.metadata?.resourceVersion;
    if (w.deleted || !obj || !rv || this.opts.fieldSelector) return;
    if (!this.inScope(obj)) return;
    if (this.opts.labelSelector) {
      const wanted = parseLabelSelector(this.opts.labelSelector);
      if (!matchesLabels(wanted, obj.metadata.labels)) return;
    }
    const key = objectKey(obj);
    this.ownWrites.wrote(key, rv, this.store.get(key)?.metadata.resourceVersion);
  }

  list(namespace?: string): T[] {
    const all = [...this.store.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  get size(): number {
    return this.store.size;
  }

  /** Keys of the cached objects whose ownerReferences name this owner (group, kind and uid). */
  keysOwnedBy(owner: OwnerId): string[] {
    return [...(this.ownerIndex.get(ownerIndexKey(owner)) ?? [])];
  }

  /** The label selector every cached object matches (what the list+watch asked for). */
  get labelSelector(): string | undefined {
    return this.opts.labelSelector;
  }

  get fieldSelector(): string | undefined {
    return this.opts.fieldSelector;
  }

  /** The name of the pruning cached objects went through, if any. */
  get prunedBy(): string | undefined {
    return this.opts.prune?.name;
  }

  /** Whether cached objects keep their managedFields (so an apply can be decided without a request). */
  get keepsManagedFields(): boolean {
    return this.opts.keepManagedFields === true;
  }

  /**
   * Whether every object of this namespace (undefined: of all namespaces) that the selectors match
   * is in this cache. A cluster-scoped kind has no namespace and is always covered.
   */
  covers(namespace: string | undefined): boolean {
    if (!this.type.namespaced || !this.namespaces) return true;
    if (namespace === undefined || !this.namespaces.has(namespace)) return false;
    // A namespace added at run time is not covered before its first list completes: until then an
    // absent object may only be not listed yet (readers ask the API server instead).
    return !this.synced || this.scopesSynced.has(this.mode === "cluster" ? "*" : namespace);
  }

  /** Whether this informer may be refused without harm (see InformerOptions.optional). */
  get optional(): boolean {
    return this.opts.optional === true;
  }

  /** Scopes whose list or watch was refused (optional informers only); they are not watched. */
  get refused(): string[] {
    return [...this.refusedScopes];
  }

  /** Whether this cache holds PartialObjectMetadata rather than whole objects. */
  get metadataOnly(): boolean {
    return this.opts.metadataOnly === true;
  }

  private scopeName(ns: string | undefined): string {
    return ns ?? "*";
  }

  private progress(ns: string | undefined): void {
    const scope = this.scopeName(ns);
    // A loop stopping for a namespace just removed must not leave a scope behind that never moves.
    if (scope !== "*" && this.namespaces && !this.namespaces.has(scope)) return;
    this.lastProgress.set(scope, performance.now());
  }

  /** Whether an object belongs in this cache: a cluster-wide watch also brings other namespaces'. */
  private inScope(obj: KubeObject): boolean {
    if (!this.namespaces) return true;
    return obj.metadata.namespace !== undefined && this.namespaces.has(obj.metadata.namespace);
  }

  /**
   * The scopes (namespace, or "*") of a running informer whose list/watch loop has shown no sign
   * of life for `thresholdMs`: failing lists or watches, or a connection gone silent. A healthy
   * quiet watch shows life every two bookmark intervals: its connection answering a ping counts.
   */
  stalledScopes(thresholdMs: number, now = performance.now()): string[] {
    if (!this.abort || this.abort.signal.aborted) return [];
    return [...this.lastProgress].filter(([, at]) => now - at > thresholdMs).map(([scope]) => scope);
  }

  private async run(namespace: string | undefined, loop: Loop): Promise<void> {
    const signal = loop.abort.signal;
    const log = this.opts.log.child({ resource: this.type.plural, namespace: namespace ?? "(all)" });
    let resourceVersion: string | undefined;
    let failures = 0;
    let lastFailureAt = Number.NEGATIVE_INFINITY;
    let listedBefore = false;
    const quietMs = 2 * (this.opts.bookmarkIntervalMs ?? 60_000);
    const staleMs = this.opts.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    const minWatchMs = this.opts.minWatchMs ?? 1_000;
    const resetMs = this.opts.backoffResetMs ?? 120_000;
    // The last time the server told this loop something (a list, an event, a bookmark), or a check
    // found it at our resourceVersion: kept across re-opened watches, it is what staleMs measures.
    let heardAt = performance.now();
    while (!signal.aborted) {
      try {
        if (loop.relistWanted) {
          loop.relistWanted = false;
          resourceVersion = undefined;
        }
        if (resourceVersion === undefined) {
          if (listedBefore) informerRelists.inc({ resource: this.type.plural });
          resourceVersion = await this.relist(namespace);
          listedBefore = true;
          heardAt = performance.now();
          this.markSynced(namespace);
        }
        const [lo, hi] = this.opts.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
        const watchStarted = performance.now();
        let events = 0;
        let verdict: QuietVerdict | undefined;
        let ended = false;
        let silence: NodeJS.Timeout | undefined;
        const w = this.client.watch(
          this.type,
          {
            namespace,
            labelSelector: this.opts.labelSelector,
            fieldSelector: this.opts.fieldSelector,
            resourceVersion,
            timeoutSeconds: Math.round(lo + Math.random() * (hi - lo)),
            metadataOnly: this.opts.metadataOnly,
          },
          (event) => {
            resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
            events++;
            heardAt = performance.now();
            silence?.refresh();
            this.progress(namespace);
            if (event.type === "BOOKMARK") return;
            if (!this.inScope(event.object)) return;
            const obj = this.slim(event.object as T);
            if (event.type === "DELETED") this.remove(obj);
            else this.upsert(obj);
          },
        );
        loop.watch = w;
        const openedAt = resourceVersion;
        let judging = false;
        // One judgement at a time (an event re-arms the timer while one may be in flight).
        const onQuiet = () => {
          if (judging) return;
          judging = true;
          const stale = performance.now() - heardAt >= staleMs;
          void this.judgeQuiet(w, namespace, resourceVersion ?? openedAt, stale, log).then((v) => {
            judging = false;
            if (ended) return;
            if (v === "alive" || v === "reached") {
              // Quiet, not dead: its connection answered, so the loop is alive (liveness reads it).
              this.progress(namespace);
              if (v === "reached") heardAt = performance.now();
              silence?.refresh();
              return;
            }
            verdict = v;
            w.abort(v === "reopen");
          });
        };
        silence = setTimeout(onQuiet, quietMs);
        const onAbort = () => w.abort();
        signal.addEventListener("abort", onAbort, { once: true });
        try {
          await w.done;
          this.progress(namespace);
        } finally {
          ended = true;
          loop.watch = undefined;
          clearTimeout(silence);
          signal.removeEventListener("abort", onAbort);
        }
        if (signal.aborted) break;
        if (loop.relistWanted) continue;
        if (verdict === "dead")
          throw new Error(`watch silent for ${quietMs} ms and its connection did not answer a ping`);
        if (verdict === "behind") {
          log.warn(
            { resourceVersion, silentForMs: Math.round(performance.now() - heardAt) },
            "the API server has not reached this watch's resourceVersion (etcd restored from a backup?); listing again",
          );
          resourceVersion = undefined;
          continue;
        }
        if (verdict === "reopen") {
          log.debug({ quietMs }, "watch quiet; opening it again from its resourceVersion");
          continue;
        }
        const lasted = performance.now() - watchStarted;
        if (events === 0 && lasted < minWatchMs)
          throw new Error(`watch closed after ${Math.round(lasted)} ms with no event`);
      } catch (e) {
        if (signal.aborted) break;
        if (this.opts.optional && isForbidden(e)) {
          this.refusedScopes.add(this.scopeName(namespace));
          log.info(
            { err: errorMessage(e) },
            "not allowed to list and watch: reads of these go to the API server",
          );
          break;
        }
        if (isGone(e)) {
          log.info("watch history expired (410 Gone); listing again");
          resourceVersion = undefined;
          continue;
        }
        // Relist, but through the backoff below: a lagging server may answer "too large" again.
        if (isResourceVersionTooLarge(e)) resourceVersion = undefined;
        const now = performance.now();
        if (now - lastFailureAt > resetMs) failures = 0;
        lastFailureAt = now;
        failures++;
        const delay = exponentialDelay(
          failures,
          this.opts.backoffMinMs ?? 200,
          this.opts.backoffMaxMs ?? 30_000,
        );
        log.warn({ err: errorMessage(e), retryInMs: delay, failures }, "list/watch failed; retrying");
        await sleep(delay, signal);
      }
    }
  }

  /**
   * What a watch with nothing to say for a quiet period is. Silence alone means little: the API
   * server's watch cache sends a watch a bookmark (about every minute) only once its version of the
   * kind is past the one the watch started from (k8s.io/apiserver cacher, cache_watcher.go), and
   * for a kind nobody writes that version moves when etcd's progress notification reaches the cache
   * (every 10 minutes by default), so a healthy watch of `ingresses` can be silent for minutes:
   * issue 46 saw watches of openbaorestores, ingresses, CRDs and storage classes silent past 120 s,
   * where the test environment's kube-apiserver 1.37 moved its cache's version, and so sent a
   * quiet watch of limitranges a bookmark, every 60 s. What is asked:
   * - is the connection alive? An HTTP/2 ping on it, answered: the watch stays open, costing no
   *   request ("alive"); unanswered: the transport drops the connection ("dead": the watch is
   *   opened again, from its resourceVersion, on another). HTTP/1.1 has no ping, so the watch is
   *   opened again from its resourceVersion ("reopen"): a WATCH, never a LIST.
   * - after `stale` silence (staleAfterMs, across re-opened watches), has the server reached our
   *   resourceVersion? The watch cache accepts a watch from a version it has not reached and then
   *   drops every event and bookmark up to it: silent for as long as it is behind, which for etcd
   *   restored from a backup without its revision bumped is until it has made up the difference.
   *   client-go stays stuck there; one metadata list of one item tells ("behind": a fresh list),
   *   and otherwise the silence is known to be quiet ("reached").
   */
  private async judgeQuiet(
    w: Watch,
    namespace: string | undefined,
    resourceVersion: string,
    stale: boolean,
    log: Logger,
  ): Promise<QuietVerdict> {
    const alive = await w.connectionAlive(QUIET_PING_TIMEOUT_MS).catch(() => undefined);
    if (alive === false) return "dead";
    let reached: boolean | undefined;
    if (stale) {
      try {
        reached = await this.client.reachedResourceVersion(this.type, namespace, resourceVersion);
      } catch (e) {
        // Not an answer either way (the server busy, the connection failing): asked again next time.
        log.debug(
          { err: errorMessage(e) },
          "could not ask whether the server reached the watch's resourceVersion",
        );
      }
      if (reached === false) return "behind";
    }
    log.debug(
      {
        connection: alive ? "answers pings" : "no ping (HTTP/1.1, or the watch not answered yet)",
        serverAtVersion: reached,
      },
      "watch quiet",
    );
    if (alive === undefined) return "reopen";
    return reached ? "reached" : "alive";
  }

  /** Lists page by page, then reconciles the store with what the server holds now. */
  private async relist(namespace: string | undefined): Promise<string> {
    const startedAt = performance.now();
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv = "";
    do {
      const listOpts = {
        namespace,
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        limit: this.opts.pageSize ?? 500,
        continue: cont,
      };
      const page = this.opts.metadataOnly
        ? ((await this.client.listMetadata(this.type, listOpts)) as KubeList<T>)
        : await this.client.list<T>(this.type, listOpts);
      this.progress(namespace);
      for (const item of page.items) {
        if (!this.inScope(item)) continue;
        const obj = this.slim(item);
        seen.add(objectKey(obj));
        this.upsert(obj);
      }
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion ?? rv;
    } while (cont);
    for (const [key, obj] of this.store) {
      if (namespace !== undefined && obj.metadata.namespace !== namespace) continue;
      if (!seen.has(key)) this.remove(obj);
    }
    this.ownWrites.listed(startedAt, (key) => namespace === undefined || key.startsWith(`${namespace}/`));
    return rv;
  }

  private markSynced(namespace: string | undefined): void {
    this.scopesSynced.add(this.scopeName(namespace));
    if (!this.synced && this.wantedScopes().every((s) => this.scopesSynced.has(s))) this.synced = true;
    if (this.synced) for (const w of this.syncWaiters.splice(0)) w();
  }

  private upsert(obj: T): void {
    if (!this.inScope(obj)) return;
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    this.store.set(key, obj);
    if (old) this.unindex(key, old);
    this.index(key, obj);
    for (const h of this.handlers) this.notify(() => (old ? h.update?.(old, obj) : h.add?.(obj)));
    // After the handlers: a pass deferred on this write is queued once the cache holds it.
    if (obj.metadata.resourceVersion) this.ownWrites.received(key, obj.metadata.resourceVersion);
  }

  private remove(obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (!old) return;
    this.store.delete(key);
    this.unindex(key, old);
    for (const h of this.handlers) this.notify(() => h.delete?.(obj));
    this.ownWrites.received(key, undefined);
  }

  /** A failing handler is logged; it must not break the watch or keep other handlers from the event. */
  private notify(call: () => void): void {
    try {
      call();
    } catch (e) {
      this.opts.log.error(
        { err: errorMessage(e), resource: this.type.plural },
        "informer event handler failed",
      );
    }
  }

  private index(key: string, obj: T): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const id = refIndexKey(ref);
      const keys = this.ownerIndex.get(id) ?? new Set<string>();
      this.ownerIndex.set(id, keys);
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const id = refIndexKey(ref);
      const keys = this.ownerIndex.get(id);
      keys?.delete(key);
      if (keys?.size === 0) this.ownerIndex.delete(id);
    }
  }

  private slim(obj: T): T {
    if (this.opts.metadataOnly) obj = toMetadataOnly(obj);
    // List items of built-in kinds come without apiVersion and kind; owners and events need both.
    else if (!obj.kind) {
      obj.apiVersion = apiVersionOf(this.type);
      obj.kind = this.type.kind;
    }
    // managedFields and kubectl's last-applied copy are dropped unless the no-write check needs them.
    if (!this.opts.keepManagedFields) obj = slimForCache(obj);
    if (!this.opts.prune || this.opts.metadataOnly) return obj;
    try {
      return this.opts.prune.apply(obj) as T;
    } catch (e) {
      // An object the pruning did not expect (a field missing, another type) is cached as it is:
      // a throw here would fail the list and relist forever, stalling every object of the kind.
      if (!this.pruneFailed) {
        this.pruneFailed = true;
        this.opts.log.warn(
          { resource: this.type.plural, pruning: this.opts.prune.name, err: (e as Error).message },
          "cache pruning failed on an object; it and any other such object are cached unpruned",
        );
      }
      return obj;
    }
  }
}

/** See Informer.judgeQuiet. */
type QuietVerdict = "alive" | "reached" | "reopen" | "dead" | "behind";

interface Loop {
  readonly abort: AbortController;
  /** The open watch, so a relist can be asked for at once. */
  watch?: { abort(): void };
  relistWanted: boolean;
  relist(): void;
  done: Promise<void>;
}

/**
 * The server answers PartialObjectMetadata to the metadata Accept header; should anything in
 * between answer a whole object instead, only its metadata is kept, so the cache stays small.
 */
function toMetadataOnly<T extends KubeObject>(obj: T): T {
  if (obj.kind === "PartialObjectMetadata") return obj;
  return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: obj.metadata } as T;
}
