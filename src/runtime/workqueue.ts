import { exponentialDelay } from "./backoff.js";
import { DelayedKeys } from "./delayed-keys.js";
import { workqueueAdds, workqueueDepth, workqueueQueueDuration, workqueueRetries } from "./metrics.js";
import { type Clock, DEFAULT_QUEUE_RATE_LIMIT, TokenBucket, type TokenBucketOptions } from "./ratelimit.js";

export interface WorkQueueOptions {
  /** Metric label; one queue per controller. */
  name: string;
  /** First retry delay after a failure (controller-runtime: 5 ms). */
  baseDelayMs?: number;
  /** Longest retry delay (controller-runtime: 1000 s). */
  maxDelayMs?: number;
  /**
   * Overall limit on retries over all keys, on top of the per-key backoff (client-go's default
   * controller rate limiter: 10 qps, burst 100): many keys failing at once cannot flood the API.
   */
  rateLimit?: TokenBucketOptions;
  /** Monotonic clock of the overall limit; tests inject one. */
  clock?: Clock;
}

/** Array-backed FIFO with O(1) amortised push/shift; a plain array's shift is O(n) at 10k keys. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(v: T): void {
    this.items.push(v);
  }
  /** Puts `v` first; O(1) while shifted slots are free at the front (the usual case), else O(n). */
  unshift(v: T): void {
    if (this.head > 0) this.items[--this.head] = v;
    else this.items.unshift(v);
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return v;
  }
}

/**
 * A work queue with the guarantees controllers rely on:
 * - a key waiting twice is queued once (de-duplication);
 * - a key is never handed to two workers at once: re-added while processing, it is queued again
 *   only when `done` is called;
 * - per-key exponential backoff for failures, reset by `forget`;
 * - delayed adds, keeping the earliest pending time per key;
 * - `shutDown` stops handing out keys; `drain` waits for the keys being processed.
 */
export class WorkQueue {
  private readonly queue = new Fifo<string>();
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new DelayedKeys((key) => this.add(key));
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;
  // When a worker last took or finished a key, or the queue last went from empty to waiting.
  private progressAt = performance.now();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly bucket: TokenBucket;

  constructor(private readonly opts: WorkQueueOptions) {
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1_000_000;
    this.bucket = new TokenBucket(opts.rateLimit ?? DEFAULT_QUEUE_RATE_LIMIT, opts.clock);
    // Series exist from the start, so dashboards and alerts see 0 rather than nothing.
    workqueueDepth.set({ name: opts.name }, 0);
    workqueueAdds.inc({ name: opts.name }, 0);
    workqueueRetries.inc({ name: opts.name }, 0);
  }

  get name(): string {
    return this.opts.name;
  }

  /** Keys waiting to be handed out (not counting delayed ones or those being processed). */
  get length(): number {
    return this.queue.length;
  }

  get processingCount(): number {
    return this.processing.size;
  }

  get delayedCount(): number {
    return this.delayed.size;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    workqueueAdds.inc({ name: this.opts.name });
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /**
   * Like `add`, but the key is handed out before the keys already waiting: for a key that has
   * waited once already (a deferred pass resuming), whose dependents may be waiting on it in turn.
   */
  addFirst(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    workqueueAdds.inc({ name: this.opts.name });
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.enqueue(key, true);
  }

  private enqueue(key: string, first = false): void {
    this.addedAt.set(key, performance.now());
    const waiter = this.waiters.shift();
    if (waiter) {
      this.take(key);
      waiter(key);
      return;
    }
    if (this.queue.length === 0) this.progressAt = performance.now();
    if (first) this.queue.unshift(key);
    else this.queue.push(key);
    workqueueDepth.set({ name: this.opts.name }, this.queue.length);
  }

  private take(key: string): void {
    this.progressAt = performance.now();
    this.dirty.delete(key);
    this.processing.add(key);
    const at = this.addedAt.get(key);
    if (at !== undefined) {
      workqueueQueueDuration.observe({ name: this.opts.name }, (performance.now() - at) / 1000);
      this.addedAt.delete(key);
    }
  }

  /** Adds the key after `ms`; when the key is already scheduled, the earlier time wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    this.delayed.schedule(key, ms);
  }

  /** Requeues after a failure: the later of this key's next backoff delay and the overall limit. */
  addRateLimited(key: string): void {
    this.addAfter(key, this.whenRateLimited(key));
  }

  /**
   * The delay addRateLimited uses; counts one failure of the key and takes one overall token.
   * `schedule` replaces the queue's own base and cap (a reported failure backs off in seconds, a
   * thrown one in milliseconds) while sharing the key's one failure count.
   */
  whenRateLimited(key: string, schedule?: { baseDelayMs: number; maxDelayMs: number }): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    workqueueRetries.inc({ name: this.opts.name });
    const base = schedule?.baseDelayMs ?? this.baseDelayMs;
    const max = schedule?.maxDelayMs ?? this.maxDelayMs;
    return Math.max(exponentialDelay(n, base, max), this.bucket.reserve());
  }

  /** Clears the failure history: the next failure starts again at the base delay. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Waits for the next key; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      workqueueDepth.set({ name: this.opts.name }, this.queue.length);
      this.take(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the key processed; if it was added meanwhile, it goes back into the queue now. */
  done(key: string): void {
    this.progressAt = performance.now();
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.enqueue(key);
    if (this.processing.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Stops handing out keys and drops delayed ones; waiting workers receive undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    this.delayed.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** How long keys have been waiting with no worker taking or finishing one; 0 when none waits. */
  stalledForMs(now = performance.now()): number {
    return this.queue.length === 0 || this.shuttingDown ? 0 : now - this.progressAt;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Resolves once no key is being processed. */
  drain(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
