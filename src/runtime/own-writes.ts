/**
 * Read-your-writes for one cache: the writes this process made to objects the cache holds, until
 * the cache has shown each of them. A pass that starts while one is outstanding would read the
 * object one write (or more) behind and act on it again (take a lock it just gave back, count an
 * outcome twice), so the controller defers it until the watch delivers the write (controller.ts).
 *
 * resourceVersions are opaque: a write is shown when the cache receives an object carrying exactly
 * the resourceVersion the write returned, when the object leaves the cache, or when a list that
 * started after the write was recorded has refreshed the object's scope. Every write to an object
 * produces its own watch event, delivered in order, so "equal" is enough; a write that changed
 * nothing returns a resourceVersion the cache may already hold or have held, which a short memory
 * of what the cache received answers. Several writes to one key are tracked one by one: the
 * answers of concurrent writes can arrive in another order than the server made them, and keeping
 * only the last answer would call the object shown once an older write's event arrived.
 */

export interface OwnWritesOptions {
  /**
   * How long a write is waited for before it is given up as shown (default 30 s): a bound on a
   * write whose event the cache will never receive (it left the cache's selection unnoticed).
   */
  memoryMs?: number;
  /** How many (key, resourceVersion) pairs the cache received are remembered (default 256). */
  recentEvents?: number;
  now?: () => number;
}

interface Outstanding {
  /** resourceVersions written and not yet received. */
  versions: Set<string>;
  /** When the oldest of them was recorded. */
  since: number;
}

export class OwnWrites {
  private readonly outstanding = new Map<string, Outstanding>();
  /** (key@resourceVersion) the cache received, with the order it received them in, oldest first. */
  private readonly recent = new Map<string, number>();
  private received_ = 0;
  private readonly listeners = new Set<(key: string) => void>();
  private readonly memoryMs: number;
  private readonly recentMax: number;
  private readonly now: () => number;

  constructor(opts: OwnWritesOptions = {}) {
    this.memoryMs = opts.memoryMs ?? 30_000;
    this.recentMax = opts.recentEvents ?? 256;
    this.now = opts.now ?? (() => performance.now());
  }

  /**
   * Records a write to `key` whose answer carried `resourceVersion`; `held` is the resourceVersion
   * the cache holds for the key right now (undefined: none).
   */
  wrote(key: string, resourceVersion: string, held: string | undefined): void {
    if (held === resourceVersion || this.recent.has(`${key}@${resourceVersion}`)) return;
    const o = this.outstanding.get(key);
    if (o) o.versions.add(resourceVersion);
    else this.outstanding.set(key, { versions: new Set([resourceVersion]), since: this.now() });
  }

  /** The cache received `key` at `resourceVersion`, or (undefined) dropped it. */
  received(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) {
      this.settle(key);
      return;
    }
    const id = `${key}@${resourceVersion}`;
    if (!this.recent.has(id)) {
      this.recent.set(id, ++this.received_);
      if (this.recent.size > this.recentMax) this.recent.delete(this.recent.keys().next().value!);
    }
    const o = this.outstanding.get(key);
    if (!o?.versions.delete(resourceVersion)) return;
    if (o.versions.size === 0) this.settle(key);
  }

  /**
   * A list that started at `startedAt` has refreshed the keys `covers` accepts: the writes recorded
   * before it started are in what it returned.
   */
  listed(startedAt: number, covers: (key: string) => boolean): void {
    for (const [key, o] of [...this.outstanding]) if (o.since <= startedAt && covers(key)) this.settle(key);
  }

  /** Whether a write to `key` has not been shown yet (and is still waited for). */
  pending(key: string): boolean {
    const o = this.outstanding.get(key);
    if (!o) return false;
    if (this.now() - o.since > this.memoryMs) {
      this.settle(key);
      return false;
    }
    return true;
  }

  /** Whether the write to `key` that returned `resourceVersion` is pending (not shown yet). */
  waitsFor(key: string, resourceVersion: string): boolean {
    return this.pending(key) && this.outstanding.get(key)!.versions.has(resourceVersion);
  }

  /**
   * Whether the cache received `key` at `a` before it received it at `b`: the order of the watch,
   * for a copy of the object handed around after the cache moved on. False when either is unknown.
   */
  receivedBefore(key: string, a: string | undefined, b: string): boolean {
    const sa = a === undefined ? undefined : this.recent.get(`${key}@${a}`);
    const sb = this.recent.get(`${key}@${b}`);
    return sa !== undefined && sb !== undefined && sa < sb;
  }

  /** How long, at most, a pending write to `key` is still waited for (0: none is). */
  remainingMs(key: string): number {
    const o = this.outstanding.get(key);
    return o ? Math.max(0, this.memoryMs - (this.now() - o.since)) : 0;
  }

  /** Whether any key `covers` accepts has a pending write (a list that could contain it). */
  anyPending(covers: (key: string) => boolean): boolean {
    for (const key of [...this.outstanding.keys()]) if (covers(key) && this.pending(key)) return true;
    return false;
  }

  /** Calls `listener(key)` each time every write to a key has been shown; returns the unsubscribe. */
  onShown(listener: (key: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keys with writes outstanding (tests, diagnostics). */
  get size(): number {
    return this.outstanding.size;
  }

  private settle(key: string): void {
    if (!this.outstanding.delete(key)) return;
    for (const l of this.listeners) {
      try {
        l(key);
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}
