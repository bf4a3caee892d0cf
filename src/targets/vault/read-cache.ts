import type { KvState } from "./kv.js";

/**
 * KV states read or written recently, so a reference is served from the read its source's own
 * reconcile made in the same resync pass instead of another request. An object's own path is
 * always read fresh: compare-and-set needs the current version.
 */
export class ReadCache {
  private readonly entries = new Map<string, { state: KvState; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 50_000,
  ) {}

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
    this.entries.set(path, { state, at: this.now() });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(path: string): void {
    this.entries.delete(path);
  }
}
