import { sleep } from "./backoff.js";

/** A monotonic millisecond clock; injected so tests need no wall clock. */
export type Clock = () => number;

const monotonic: Clock = () => performance.now();

export interface TokenBucketOptions {
  /** Tokens added per second. */
  qps: number;
  /** Tokens the bucket holds when full: how many calls may go at once after a quiet period. */
  burst: number;
}

/** Throws an error naming the field when a rate limit setting is not usable. */
export function checkRateLimit(opts: TokenBucketOptions, where: string): void {
  if (!(typeof opts.qps === "number" && Number.isFinite(opts.qps) && opts.qps > 0))
    throw new Error(`${where}.qps: must be a number above 0, got ${String(opts.qps)}`);
  if (!(Number.isInteger(opts.burst) && opts.burst >= 1))
    throw new Error(`${where}.burst: must be a whole number of at least 1, got ${String(opts.burst)}`);
}

/**
 * A token bucket that hands out reservations, like Go's rate.Limiter: a caller that finds the
 * bucket empty takes a token from the future and is told how long to wait for it. Waiting callers
 * therefore queue up in order at the steady rate instead of all retrying when a token appears.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly opts: TokenBucketOptions,
    private readonly now: Clock = monotonic,
  ) {
    checkRateLimit(opts, "rateLimit");
    this.tokens = opts.burst;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((t - this.last) / 1000) * this.opts.qps);
    this.last = t;
  }

  /** Takes one token; returns the milliseconds to wait before using it (0 when one was available). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.opts.qps) * 1000;
  }

  /** Waits for a token; resolves with the time waited. An abort ends the wait early. */
  async take(signal?: AbortSignal): Promise<number> {
    const wait = this.reserve();
    if (wait > 0) await sleep(wait, signal);
    return wait;
  }

  /** Tokens available now (negative when callers are already waiting on future ones). */
  get available(): number {
    this.refill();
    return this.tokens;
  }
}

/**
 * The API client's limit controller-runtime applied until v0.21 (20 requests/s, bursts of 30). Since
 * then it sets none by default and relies on the API server's priority and fairness, and so does
 * KubeClient; this is the value to pass when a client-side limit is wanted.
 */
export const DEFAULT_CLIENT_RATE_LIMIT: TokenBucketOptions = { qps: 20, burst: 30 };

/** client-go's default overall limit on work-queue retries: 10 per second, bursts of 100. */
export const DEFAULT_QUEUE_RATE_LIMIT: TokenBucketOptions = { qps: 10, burst: 100 };

/**
 * Reads a Retry-After header as whole seconds (the form the API server sends) or an HTTP date.
 * Returns undefined when absent or unreadable, so the caller does not retry on a guess.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs = Date.now(),
): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === "") return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
