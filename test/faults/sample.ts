/** A small seeded generator (mulberry32): the same seed picks the same crash points. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `k` distinct crash points out of 1..`writes`, in increasing order (all of them when k >= writes). */
export function crashPoints(writes: number, k: number, seed: number): number[] {
  const all = Array.from({ length: writes }, (_, i) => i + 1);
  if (k >= writes) return all;
  const rnd = seededRandom(seed);
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, k).sort((x, y) => x - y);
}
