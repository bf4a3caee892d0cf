/**
 * The passes of this process under way on each reference source path. A pass copying from a path
 * that another pass is reading or writing at that moment waits for it before reading the source:
 * in a first seed the source is usually moments from being written, and reading it before would
 * report RefPending (a status write and an Event) only to requeue the object and write its status
 * again once the source lands. The wait is bounded, and a pass in a reference cycle never waits.
 */
export class PathPasses {
  private readonly open = new Map<string, Set<Promise<void>>>();

  /** Marks a pass on `path` under way; the returned function ends it (call it exactly once). */
  begin(path: string): () => void {
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
   * Resolves once every pass on `path` under way now has ended, after `maxMs` at the latest, or as
   * soon as `signal` aborts: the caller reads the source afterwards either way.
   */
  async settled(path: string, maxMs: number, signal?: AbortSignal): Promise<void> {
    const passes = this.open.get(path);
    if (!passes || passes.size === 0 || signal?.aborted) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxMs);
      onAbort = resolve;
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([Promise.all([...passes]), bound]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }
}
