/** Node clamps longer timeouts to 1 ms (with a warning); a longer wait is taken in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

interface Entry {
  key: string;
  at: number;
}

/**
 * Keys that become due at a time, each at most once (the earliest time wins), behind a single timer
 * for the earliest. A `setTimeout` per key cost about 340 bytes at 10,000 requeued objects (measured
 * by heap snapshot: every jittered delay differs, so each timer also got its own timer list); here a
 * key costs a map entry and a heap slot.
 */
export class DelayedKeys {
  private readonly due = new Map<string, number>();
  /** Min-heap by `at`. Entries whose `at` no longer matches `due` were superseded and are skipped. */
  private heap: Entry[] = [];
  private timer?: NodeJS.Timeout;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly fire: (key: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.due.size;
  }

  /** When `key` is due (in `now()`'s clock), or undefined when it is not scheduled. */
  dueAt(key: string): number | undefined {
    return this.due.get(key);
  }

  /** Schedules `key` in `ms`; a key already due earlier keeps its time. */
  schedule(key: string, ms: number): void {
    const at = this.now() + ms;
    const current = this.due.get(key);
    if (current !== undefined && current <= at) return;
    this.due.set(key, at);
    this.push({ key, at });
    if (at < this.timerAt) this.arm();
  }

  clear(): void {
    this.due.clear();
    this.heap = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const top = this.heap[0];
    if (!top) return;
    this.timerAt = top.at;
    const wait = Math.min(MAX_TIMEOUT_MS, Math.max(0, Math.ceil(top.at - this.now())));
    this.timer = setTimeout(() => this.run(), wait);
  }

  private run(): void {
    const now = this.now();
    try {
      while (this.heap.length > 0 && this.heap[0]!.at <= now) {
        const { key, at } = this.pop();
        if (this.due.get(key) !== at) continue;
        this.due.delete(key);
        this.fire(key);
      }
    } finally {
      // Even if a callback throws, the keys still waiting keep their timer.
      this.arm();
    }
  }

  private push(entry: Entry): void {
    const h = this.heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.at <= entry.at) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = entry;
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const child = r < h.length && h[r]!.at < h[l]!.at ? r : l;
        if (h[child]!.at >= last.at) break;
        h[i] = h[child]!;
        i = child;
      }
      h[i] = last;
    }
    return top;
  }
}
