import { setTimeout as delay } from "node:timers/promises";

/**
 * The executor's one way of trying again within a deadline: a pause that doubles from `firstMs` up
 * to `maxMs`, and no pause that would end past `withinMs` after the start. `onWaiting` hears why
 * each attempt is tried again; an aborted `signal` ends a pause with its AbortError.
 */
export class Patience {
  readonly deadline: number;
  private pause: number;

  constructor(
    private readonly opts: {
      withinMs: number;
      firstMs: number;
      maxMs: number;
      signal?: AbortSignal | undefined;
      onWaiting?: ((why: string) => void) | undefined;
    },
  ) {
    this.deadline = Date.now() + opts.withinMs;
    this.pause = opts.firstMs;
  }

  /** Waits before the next attempt and resolves true, or false at once when no time is left for one. */
  async again(why: string): Promise<boolean> {
    if (Date.now() + this.pause >= this.deadline) return false;
    this.opts.onWaiting?.(why);
    await delay(this.pause, undefined, { signal: this.opts.signal });
    this.pause = Math.min(this.pause * 2, this.opts.maxMs);
    return true;
  }
}
