/**
 * At most `size` holders at once; the others wait in arrival order. A pass can hold a slot for the
 * part of its work that talks to a backend and give it back before its status write, so the
 * backend sees no more requests at once than configured while status writes overlap them.
 */
export class Semaphore {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new Error(`semaphore size must be a whole number ≥ 1, got ${size}`);
  }

  /** Holders now (for tests and metrics). */
  get inUse(): number {
    return this.held;
  }

  /** Runs `fn` holding a slot; the slot is given back however `fn` ends. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.held < this.size) {
      this.held++;
      return Promise.resolve();
    }
    // The slot passes straight to the waiter: `held` is not decremented and incremented again.
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held--;
  }
}
