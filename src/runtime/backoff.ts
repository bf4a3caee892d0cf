/** Exponential backoff: base · 2^(failures-1), capped. failures = 0 gives 0. */
export function exponentialDelay(failures: number, baseMs: number, maxMs: number): number {
  if (failures <= 0) return 0;
  const d = baseMs * 2 ** Math.min(failures - 1, 62);
  return Math.min(d, maxMs);
}

/** Spreads periodic requeues so objects created together do not resync together forever. */
export function jitter(ms: number, factor = 0.1, random: () => number = Math.random): number {
  return Math.round(ms * (1 + factor * random()));
}

/** A sleep that an AbortSignal can cut short (resolves early, never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
