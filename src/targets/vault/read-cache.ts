import type { KvState } from "./kv.js";

/**
 * KV states read or written recently, so a reference is served from the read its source's own
 * reconcile made in the same resync pass instead of another request. Reads in flight are shared
 * too: a reference resolved while its source's reconcile is still reading waits for that read.
 * An object's own path is never served from the cache: compare-and-set needs the current version.
 * Only paths some object copies from are kept (`keep`): any other state would sit in memory, values
 * and all, until the next resync for nothing (at 10,000 objects, megabytes of them).
 */
export class ReadCache {
  private readonly entries = new Map<string, { state: KvState; at: number }>();
  private readonly inflight = new Map<string, Promise<KvState>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 50_000,
    /** Whether a state of `path` is worth keeping: whether some object copies from it. */
    private readonly keep: (path: string) => boolean = () => true,
  ) {}

  /** A fresh read of `path` (joining one already in flight), remembered for references. */
  async readFresh(path: string, load: () => Promise<KvState>): Promise<KvState> {
    const running = this.inflight.get(path);
    if (running) return running;
    const p = load();
    this.inflight.set(path, p);
    try {
      const state = await p;
      this.set(path, state);
      return state;
    } finally {
      if (this.inflight.get(path) === p) this.inflight.delete(path);
    }
  }

  /** A recent state of `path` for a reference: cached, in flight, or read now. */
  readShared(path: string, load: () => Promise<KvState>): Promise<KvState> {
    const cached = this.get(path);
    return cached ? Promise.resolve(cached) : this.readFresh(path, load);
  }

  get(path: string): KvState | undefined {
    const e = this.entries.get(path);
    if (!e) return undefined;
    if (this.now() - e.at > this.ttlMs) {
      this.entries.delete(path);
      return undefined;
    }
    return e.state;
  }

  set(path: string, state: KvState): void {
    this.entries.delete(path);
    if (!this.keep(path)) return;
    this.entries.set(path, { state, at: this.now() });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(path: string): void {
    this.entries.delete(path);
  }
}
