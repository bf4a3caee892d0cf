import { jitter } from "./backoff.js";
import { errorMessage } from "./errors.js";
import type { Informer } from "./informer.js";
import type { Logger } from "./log.js";
import {
  activeWorkers,
  reconcileDeferred,
  reconcileErrors,
  reconcileTerminalErrors,
  reconcileTime,
  reconcileTotal,
} from "./metrics.js";
import { groupOf } from "./ownership.js";
import type { TokenBucketOptions } from "./ratelimit.js";
import { type KubeObject, objectKey, type ResourceType } from "./types.js";
import { WorkQueue } from "./workqueue.js";

/**
 * What happens after a reconcile, the way controller-runtime separates a Result from an error:
 * - `done()`: nothing until the next change;
 * - `requeueAfter(ms)`: another pass after a delay (a resync, or waiting on progress);
 * - `retry(reason)`: the pass failed and said so (usually in status): counted as an error and
 *   retried with per-key backoff that grows until a pass succeeds, like a thrown error but with
 *   the slower failure schedule, since such failures rarely clear in milliseconds;
 * - `terminal(reason)`: the pass failed in a way only a change to the object can fix (an invalid
 *   spec): counted as an error and not retried; the next change enqueues the key again;
 * - `deferUntil(promise, boundMs)`: the pass decided nothing, because what it needs is under way
 *   elsewhere in this process; the key runs again once the promise settles, or after the bound,
 *   without holding a worker meanwhile (like a pass deferred on the operator's own write).
 */
export type ReconcileResult =
  | undefined
  | { requeueAfterMs: number }
  | { retryReason: string }
  | { terminalReason: string }
  | { deferUntil: Promise<unknown>; deferBoundMs: number };

export const done = (): ReconcileResult => undefined;
export const requeueAfter = (ms: number): ReconcileResult => ({ requeueAfterMs: ms });
export const retry = (reason: string): ReconcileResult => ({ retryReason: reason });
export const terminal = (reason: string): ReconcileResult => ({ terminalReason: reason });
export const deferUntil = (until: Promise<unknown>, boundMs: number): ReconcileResult => ({
  deferUntil: until,
  deferBoundMs: boundMs,
});

/**
 * The result of a pass made of two halves: a failure wins (it must be counted and backed off),
 * a retry over a terminal one; then a deferral (the key runs again soon, both halves with it);
 * otherwise the sooner requeue, so both halves get their next look.
 */
export function combineResults(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  if (!a) return b;
  if (!b) return a;
  for (const kind of ["retryReason", "terminalReason", "deferUntil"] as const) {
    if (kind in a) return a;
    if (kind in b) return b;
  }
  const ms = (r: ReconcileResult) => (r && "requeueAfterMs" in r ? r.requeueAfterMs : Infinity);
  return ms(a) <= ms(b) ? a : b;
}

/** Default backoff of `retry` results: 5 s doubling to 5 minutes. */
export const FAILURE_BASE_DELAY_MS = 5_000;
export const FAILURE_MAX_DELAY_MS = 300_000;

export interface ReconcileContext {
  log: Logger;
  /**
   * Aborted when the manager shuts down or loses its Lease. Backend calls and long waits pass it
   * on, so a pass ends promptly instead of holding up the shutdown or outliving its leadership.
   */
  signal: AbortSignal;
  /**
   * Passes of this key that failed in a row before this one (a thrown error or a `retry` result),
   * 0 after a pass that did neither. The runtime keeps it, so a pass that must give up after N
   * tries reads it here instead of keeping its own count; a count that must survive a restart
   * belongs in the object's status. Absent outside a controller (a one-shot run, a test): read 0.
   */
  failures?: number;
}

/**
 * A thrown error is retried with the queue's per-key exponential backoff; a returned `retry` with
 * the slower failure backoff. Both count towards the same per-key failure history, which only a
 * pass that neither throws nor fails clears.
 */
export type ReconcileFn = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult>;

export interface ControllerOptions {
  name: string;
  reconcile: ReconcileFn;
  log: Logger;
  /** Keys reconciled at the same time (never the same key twice). Default 1. */
  concurrency?: number;
  /** Backoff of thrown errors (controller-runtime's 5 ms doubling to 1000 s by default). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Backoff of `retry` results (default 5 s doubling to 5 minutes). */
  failureBaseDelayMs?: number;
  failureMaxDelayMs?: number;
  /** Fraction of jitter added to requeue-after delays. Default 0.1. */
  requeueJitter?: number;
  /** Overall limit on retries after errors, over all keys (default 10 qps, burst 100). */
  queueRateLimit?: TokenBucketOptions;
}

export type Predicate<T extends KubeObject> = (oldObj: T | undefined, newObj: T) => boolean;

/** Passes updates that change the spec (metadata.generation) or deletion state; adds always pass. */
export const generationChanged: Predicate<KubeObject> = (o, n) =>
  !o ||
  o.metadata.generation !== n.metadata.generation ||
  o.metadata.deletionTimestamp !== n.metadata.deletionTimestamp ||
  JSON.stringify(o.metadata.finalizers) !== JSON.stringify(n.metadata.finalizers);

/**
 * Runs `reconcile(key)` from a work queue fed by informers. Errors go through one policy: log,
 * count, and requeue with backoff. The queue guarantees one key never runs twice at once.
 */
export class Controller {
  readonly queue: WorkQueue;
  private workers: Promise<void>[] = [];
  /** The primary kinds' caches: a pass waits until they hold this process's own writes. */
  private readonly primaries: Informer<KubeObject>[] = [];
  /** Keys whose pass waits for the cache to show an own write, with the bound of that wait. */
  private readonly deferred = new Map<string, NodeJS.Timeout>();
  private readonly abort = new AbortController();
  private started = false;

  constructor(private readonly opts: ControllerOptions) {
    this.queue = new WorkQueue({
      name: opts.name,
      baseDelayMs: opts.baseDelayMs,
      maxDelayMs: opts.maxDelayMs,
      rateLimit: opts.queueRateLimit,
    });
    activeWorkers.set({ controller: opts.name }, 0);
    reconcileErrors.inc({ controller: opts.name }, 0);
    reconcileTerminalErrors.inc({ controller: opts.name }, 0);
    reconcileDeferred.inc({ controller: opts.name }, 0);
  }

  get name(): string {
    return this.opts.name;
  }

  /** The primary kind: each change enqueues the object's own key. */
  watchPrimary<T extends KubeObject>(informer: Informer<T>, predicate?: Predicate<T>): this {
    this.primaries.push(informer as unknown as Informer<KubeObject>);
    // The event that shows an own write may not pass the predicate (a status-only change): the
    // pass deferred on it is queued here instead.
    informer.ownWrites?.onShown((key) => this.resume(key));
    informer.addHandler({
      add: (o) => this.queue.add(objectKey(o)),
      update: (o, n) => {
        if (!predicate || predicate(o, n)) this.queue.add(objectKey(n));
      },
      delete: (o) => this.queue.add(objectKey(o)),
    });
    return this;
  }

  /**
   * Objects this controller creates: a change to one enqueues the key of its controlling owner of
   * the owner's group and kind. Both sides of an update count, so a child that changes owner (or
   * loses its reference) still wakes the owner it had.
   */
  watchOwned<T extends KubeObject>(
    informer: Informer<T>,
    owner: Pick<ResourceType, "group" | "kind" | "namespaced">,
  ): this {
    const ownerKey = (o: T): string | undefined => {
      const ref = o.metadata.ownerReferences?.find(
        (r) => r.controller === true && r.kind === owner.kind && groupOf(r.apiVersion) === owner.group,
      );
      if (!ref) return undefined;
      // A namespaced owner lives in its child's namespace; a cluster-scoped owner has no namespace.
      if (!owner.namespaced) return ref.name;
      return o.metadata.namespace ? `${o.metadata.namespace}/${ref.name}` : undefined;
    };
    // Each key once per event: an update names the owner through the old and the new object, and a
    // second add after a worker took the first would mark the key dirty, running it again at once
    // (past the backoff its pass may have asked for).
    const enqueue = (...objs: T[]) => {
      const keys = new Set<string>();
      for (const o of objs) {
        const k = ownerKey(o);
        if (k !== undefined) keys.add(k);
      }
      for (const k of keys) this.queue.add(k);
    };
    informer.addHandler({
      add: (o) => enqueue(o),
      update: (o, n) => enqueue(o, n),
      delete: (o) => enqueue(o),
    });
    return this;
  }

  /**
   * Any other kind: `map` names the primary keys a change concerns (e.g. every GitLabCore that names
   * a ConfigMap). On update both the old and the new object are mapped, so a key that stops
   * matching hears about it too. `predicate`, when given, decides which updates count (adds and
   * deletes always do, except of objects `ownDoing` names: ones the pass itself creates and deletes,
   * whose coming and going is no news to it, only their progress).
   */
  watchMapped<T extends KubeObject>(
    informer: Informer<T>,
    map: (o: T) => Iterable<string>,
    predicate?: Predicate<T>,
    ownDoing?: (o: T) => boolean,
  ): this {
    // Each key once per event, for the reason watchOwned gives.
    const enqueue = (...objs: T[]) => {
      const keys = new Set<string>();
      for (const o of objs) for (const k of map(o)) keys.add(k);
      for (const k of keys) this.queue.add(k);
    };
    informer.addHandler({
      add: (o) => {
        if (!ownDoing?.(o)) enqueue(o);
      },
      update: (o, n) => {
        if (!predicate || predicate(o, n)) enqueue(o, n);
      },
      delete: (o) => {
        if (!ownDoing?.(o)) enqueue(o);
      },
    });
    return this;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const n = Math.max(1, this.opts.concurrency ?? 1);
    for (let i = 0; i < n; i++) this.workers.push(this.work());
  }

  /** How long keys have waited while no worker made progress; 0 before start (a standby has no workers). */
  stalledForMs(now = performance.now()): number {
    return this.started ? this.queue.stalledForMs(now) : 0;
  }

  /**
   * Stops at once, synchronously: no key is handed out any more and the reconciles in flight see
   * their signal aborted. Used when leadership is lost, where not one more pass may start.
   */
  halt(): void {
    for (const bound of this.deferred.values()) clearTimeout(bound);
    this.deferred.clear();
    this.queue.shutDown();
    this.abort.abort();
  }

  /** Halts, then waits for the reconciles in flight to finish. */
  async stop(): Promise<void> {
    this.halt();
    await Promise.all(this.workers);
    await this.queue.drain();
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      await this.runOne(key);
    }
  }

  /** Counts a returned result and schedules what it asks for. */
  private settle(key: string, result: ReconcileResult, log: Logger): void {
    const name = this.opts.name;
    if (result && "retryReason" in result) {
      reconcileTotal.inc({ controller: name, result: "error" });
      reconcileErrors.inc({ controller: name });
      const delay = this.queue.whenRateLimited(key, {
        baseDelayMs: this.opts.failureBaseDelayMs ?? FAILURE_BASE_DELAY_MS,
        maxDelayMs: this.opts.failureMaxDelayMs ?? FAILURE_MAX_DELAY_MS,
      });
      this.queue.addAfter(key, delay);
      // The same "reconciled" line as every finished pass (tests and operators count passes by it).
      log.debug({ result: "retry", reason: result.retryReason, retryInMs: delay }, "reconciled");
      return;
    }
    if (result && "deferUntil" in result) {
      // Decided nothing: neither a success that clears the key's failures nor a failure.
      this.deferKey(key, result.deferBoundMs, result.deferUntil);
      reconcileTotal.inc({ controller: name, result: "requeue" });
      reconcileDeferred.inc({ controller: name });
      log.debug(
        { boundMs: result.deferBoundMs },
        "pass deferred: what it needs is under way in this process",
      );
      return;
    }
    this.queue.forget(key);
    if (result && "terminalReason" in result) {
      reconcileTotal.inc({ controller: name, result: "error" });
      reconcileErrors.inc({ controller: name });
      reconcileTerminalErrors.inc({ controller: name });
      log.debug({ result: "terminal", reason: result.terminalReason }, "reconciled");
      return;
    }
    if (result && result.requeueAfterMs > 0) {
      reconcileTotal.inc({ controller: name, result: "requeue_after" });
      this.queue.addAfter(key, jitter(result.requeueAfterMs, this.opts.requeueJitter ?? 0.1));
    } else {
      reconcileTotal.inc({ controller: name, result: "success" });
    }
    // One line per finished pass (debug): what tests wait on to know an object was really processed.
    log.debug({ requeueAfterMs: result?.requeueAfterMs }, "reconciled");
  }

  /**
   * Read-your-writes: a pass never starts from a cached primary object older than this process's
   * own last write to it (a status or lock write of the pass before, not delivered by the watch
   * yet). It is deferred, and queued again when the watch delivers the write (own-writes.ts), or
   * when the wait's bound ends, so a write whose event never comes cannot stall the key.
   */
  private deferIfBehind(key: string, log: Logger): boolean {
    const behind = this.primaries.find((p) => p.ownWritePending?.(key));
    if (!behind) return false;
    if (!this.deferred.has(key)) this.deferKey(key, behind.ownWrites.remainingMs(key));
    reconcileDeferred.inc({ controller: this.opts.name });
    log.debug("pass deferred: the cache has not shown this process's last write to the object yet");
    return true;
  }

  /**
   * The key runs again when `resume` is called for it (the watch showed the own write), when
   * `until` settles, or after `boundMs`, whichever comes first; no worker waits meanwhile.
   */
  private deferKey(key: string, boundMs: number, until?: Promise<unknown>): void {
    const earlier = this.deferred.get(key);
    if (earlier) clearTimeout(earlier);
    const bound = setTimeout(() => this.resume(key), Math.max(1, boundMs));
    bound.unref?.();
    this.deferred.set(key, bound);
    const settled = () => {
      // Only the deferral this promise belongs to: a later one keeps its own bound.
      if (this.deferred.get(key) === bound) this.resume(key);
    };
    until?.then(settled, settled);
  }

  /** A deferred key runs before the keys waiting: it has waited once, and others may wait on it. */
  private resume(key: string): void {
    const bound = this.deferred.get(key);
    if (!bound) return;
    clearTimeout(bound);
    this.deferred.delete(key);
    this.queue.addFirst(key);
  }

  private async runOne(key: string): Promise<void> {
    const name = this.opts.name;
    const log = this.opts.log.child({ controller: name, object: key });
    if (this.deferIfBehind(key, log)) {
      this.queue.done(key);
      return;
    }
    const started = performance.now();
    activeWorkers.inc({ controller: name });
    try {
      const result = await this.opts.reconcile(key, {
        log,
        signal: this.abort.signal,
        failures: this.queue.numRequeues(key),
      });
      this.settle(key, result, log);
    } catch (e) {
      if (this.abort.signal.aborted) {
        // Cut short by shutdown or lost leadership: not a failure, and nothing to retry here.
        log.info({ err: errorMessage(e) }, "reconcile cancelled: the controller is stopping");
        return;
      }
      reconcileTotal.inc({ controller: name, result: "error" });
      reconcileErrors.inc({ controller: name });
      log.error({ err: errorMessage(e) }, "reconcile failed; retrying with backoff");
      this.queue.addRateLimited(key);
    } finally {
      activeWorkers.dec({ controller: name });
      reconcileTime.observe({ controller: name }, (performance.now() - started) / 1000);
      this.queue.done(key);
    }
  }
}
