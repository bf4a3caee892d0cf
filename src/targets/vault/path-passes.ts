/**
 * The passes of this process under way on each reference source path. A pass copying from a path
 * that another pass is reading or writing at that moment defers until it ends (the runtime runs
 * the copying object again then, holding no worker meanwhile): in a first seed the source is
 * usually moments from being written, and reading it before would report RefPending (a status
 * write and an Event) only to requeue the object and write its status again once the source lands.
 * An object defers for `maxMs` in all at most, then reads the sources as they are, so a source
 * that is always busy cannot hold it back; a pass in a reference cycle never defers (converge.ts).
 */
/** How long in all an object defers on its sources' passes before it reads them as they are. */
export const SOURCE_DEFER_MAX_MS = 5_000;

export class PathPasses {
  private readonly open = new Map<string, Set<Promise<void>>>();
  /** Objects deferred since (ms), until a pass of theirs reads its sources. */
  private readonly deferredSince = new Map<string, number>();
  /**
   * A deferred object's own source path, kept busy until its next pass begins: in a chain
   * (C copies B, B copies A) C must not read B's path empty just because B's pass deferred.
   */
  private readonly held = new Map<string, () => void>();

  constructor(
    private readonly maxMs: number = SOURCE_DEFER_MAX_MS,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /**
   * Marks a pass on `path` under way; the returned function ends it (call it exactly once). With
   * `key`, the object's own pass: what its last deferral held (`deferral`'s `own`) is let go.
   */
  begin(path: string, key?: string): () => void {
    const end = this.mark(path);
    if (key !== undefined) this.release(key);
    return end;
  }

  private mark(path: string): () => void {
    let end!: () => void;
    const pass = new Promise<void>((resolve) => {
      end = resolve;
    });
    const set = this.open.get(path) ?? new Set<Promise<void>>();
    this.open.set(path, set);
    set.add(pass);
    return () => {
      end();
      set.delete(pass);
      if (set.size === 0 && this.open.get(path) === set) this.open.delete(path);
    };
  }

  /** Whether some pass on `path` is under way. */
  busy(path: string): boolean {
    return (this.open.get(path)?.size ?? 0) > 0;
  }

  /**
   * For object `key` about to read `sources`: undefined when it should read them now (none busy,
   * or it has deferred `maxMs` already), else what it defers on: every pass under way now on a busy
   * source has ended, and how much longer it may defer at most.
   */
  deferral(
    key: string,
    sources: readonly string[],
    own?: string,
  ): { until: Promise<void>; boundMs: number } | undefined {
    const passes = sources.flatMap((path) => [...(this.open.get(path) ?? [])]);
    if (passes.length === 0) {
      this.deferredSince.delete(key);
      return undefined;
    }
    const now = this.nowMs();
    const since = this.deferredSince.get(key) ?? now;
    const boundMs = since + this.maxMs - now;
    if (boundMs <= 0) {
      this.deferredSince.delete(key);
      return undefined;
    }
    this.deferredSince.set(key, since);
    // Its own path (when others copy it) stays busy until its next pass begins, at most the bound.
    if (own !== undefined && !this.held.has(key)) this.held.set(key, this.mark(own));
    return { until: Promise.all(passes).then(() => undefined), boundMs };
  }

  /** Lets go of what `key`'s last deferral held; a pass of the object that did not defer calls it. */
  release(key: string): void {
    const end = this.held.get(key);
    this.held.delete(key);
    end?.();
  }

  /** Drops what is kept for an object that is gone. */
  forget(key: string): void {
    this.deferredSince.delete(key);
    this.release(key);
  }
}
