import { exponentialDelay, sleep } from "./backoff.js";
import type { KubeClient } from "./client.js";
import { errorMessage, isGone } from "./errors.js";
import type { Logger } from "./log.js";
import { informerRelists } from "./metrics.js";
import { slimForCache as slim } from "./slim.js";
import { type KubeObject, objectKey, type ResourceType } from "./types.js";

export interface InformerOptions {
  /** Only these namespaces are listed and watched (one list+watch each); undefined means all. */
  namespaces?: string[];
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of the initial list. */
  pageSize?: number;
  /** Retry delays after errors: min doubling to max. */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** Server-side watch timeout range; a watch ends and resumes from the last resourceVersion. */
  watchTimeoutSeconds?: [number, number];
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
 * Watches resume from the last resourceVersion seen (bookmarks included), a 410 Gone triggers a
 * full relist, and every other error is logged and retried with capped exponential backoff: the
 * loop only ends when the informer is stopped. managedFields are dropped on the way in because no
 * reconciler reads them and they roughly double an object's size.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly ownerIndex = new Map<string, Set<string>>();
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly scopesSynced = new Set<string>();
  private readonly syncWaiters: (() => void)[] = [];
  private abort?: AbortController;
  private loops: Promise<void>[] = [];
  private readonly scopes: (string | undefined)[];

  constructor(
    private readonly client: KubeClient,
    readonly type: ResourceType,
    private readonly opts: InformerOptions,
  ) {
    this.scopes = type.namespaced && opts.namespaces ? [...new Set(opts.namespaces)] : [undefined];
  }

  addHandler(h: InformerHandler<T>): void {
    this.handlers.push(h);
  }

  start(): void {
    if (this.abort) return;
    this.abort = new AbortController();
    this.loops = this.scopes.map((ns) => this.run(ns, this.abort!.signal));
  }

  async stop(): Promise<void> {
    this.abort?.abort();
    await Promise.all(this.loops);
  }

  get hasSynced(): boolean {
    return this.scopesSynced.size === this.scopes.length;
  }

  waitForSync(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(namespace?: string): T[] {
    const all = [...this.store.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  get size(): number {
    return this.store.size;
  }

  /** Keys of the cached objects that name `uid` in their ownerReferences. */
  keysOwnedBy(uid: string): string[] {
    return [...(this.ownerIndex.get(uid) ?? [])];
  }

  private scopeName(ns: string | undefined): string {
    return ns ?? "*";
  }

  private async run(namespace: string | undefined, signal: AbortSignal): Promise<void> {
    const log = this.opts.log.child({ resource: this.type.plural, namespace: namespace ?? "(all)" });
    let resourceVersion: string | undefined;
    let failures = 0;
    let listedBefore = false;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          if (listedBefore) informerRelists.inc({ resource: this.type.plural });
          resourceVersion = await this.relist(namespace);
          listedBefore = true;
          this.markSynced(namespace);
        }
        const [lo, hi] = this.opts.watchTimeoutSeconds ?? [300, 600];
        const w = this.client.watch(
          this.type,
          {
            namespace,
            labelSelector: this.opts.labelSelector,
            fieldSelector: this.opts.fieldSelector,
            resourceVersion,
            timeoutSeconds: Math.round(lo + Math.random() * (hi - lo)),
          },
          (event) => {
            resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
            failures = 0;
            if (event.type === "BOOKMARK") return;
            const obj = slim(event.object as T);
            if (event.type === "DELETED") this.remove(obj);
            else this.upsert(obj);
          },
        );
        const onAbort = () => w.abort();
        signal.addEventListener("abort", onAbort, { once: true });
        try {
          await w.done;
        } finally {
          signal.removeEventListener("abort", onAbort);
        }
      } catch (e) {
        if (signal.aborted) break;
        if (isGone(e)) {
          log.info("watch history expired (410 Gone); listing again");
          resourceVersion = undefined;
          continue;
        }
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

  /** Lists page by page, then reconciles the store with what the server holds now. */
  private async relist(namespace: string | undefined): Promise<string> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv = "";
    do {
      const page = await this.client.list<T>(this.type, {
        namespace,
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        limit: this.opts.pageSize ?? 500,
        continue: cont,
      });
      for (const item of page.items) {
        const obj = slim(item);
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
    return rv;
  }

  private markSynced(namespace: string | undefined): void {
    this.scopesSynced.add(this.scopeName(namespace));
    if (this.hasSynced) for (const w of this.syncWaiters.splice(0)) w();
  }

  private upsert(obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    this.store.set(key, obj);
    if (old) this.unindex(key, old);
    this.index(key, obj);
    for (const h of this.handlers) this.notify(() => (old ? h.update?.(old, obj) : h.add?.(obj)));
  }

  private remove(obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (!old) return;
    this.store.delete(key);
    this.unindex(key, old);
    for (const h of this.handlers) this.notify(() => h.delete?.(obj));
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
      const keys = this.ownerIndex.get(ref.uid) ?? new Set<string>();
      this.ownerIndex.set(ref.uid, keys);
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const keys = this.ownerIndex.get(ref.uid);
      keys?.delete(key);
      if (keys?.size === 0) this.ownerIndex.delete(ref.uid);
    }
  }
}
