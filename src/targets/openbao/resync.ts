/**
 * When a cluster is looked at again after a pass. Pure: the reconciler gives it what the pass found
 * and the clock. A cluster that still waits on something (pods, TLS, initialization) is polled; a
 * settled one is left alone until an event wakes it (its pods, StatefulSet, ConfigMap, PDB, the
 * other children and the TLS Secrets are all watched) or until the earliest thing that is due by
 * the clock alone: a certificate to rotate, a posture reminder. The resync is only a backstop, so a
 * settled cluster costs nothing between events, whatever the number of clusters. Where OpenBao's pod
 * labels do not tell its seal and leader state, it is asked through the API at least every
 * {@link OBSERVE_EVERY_MS}, as before the labels were read.
 */

/** How often a settled cluster whose pod labels leave gaps is observed through OpenBao's API. */
export const OBSERVE_EVERY_MS = 60_000;

/** A failing pass backs off no further than this (before the 10-minute resync it was the resync). */
export const FAILURE_BACKOFF_MAX_MS = 60_000;

export interface NextPassInput {
  /** Initialized, every voter ready, no step blocked. */
  settled: boolean;
  paused: boolean;
  /** The pass asked OpenBao's API because the pod labels did not tell seal and leader state. */
  observedThroughApi: boolean;
  /** Epoch ms of things due by the clock (certificate rotation, reminders); undefined: none. */
  dueAt: readonly (number | undefined)[];
  now: number;
  resyncMs: number;
  pollMs: number;
}

/** Lands a pass just after a deadline, not on it, so the clock has surely passed it. */
const AFTER_DUE_MS = 1000;

/**
 * Milliseconds until the next pass. A deadline already past was this pass's to act on (it rotated,
 * it reminded), so only future ones count: a failed action is retried by the failure backoff, not
 * by spinning on a past deadline.
 */
export function nextPassMs(i: NextPassInput): number {
  if (!i.settled && !i.paused) return i.pollMs;
  let ms = i.resyncMs;
  if (i.observedThroughApi && !i.paused) ms = Math.min(ms, OBSERVE_EVERY_MS);
  for (const at of i.dueAt) if (at !== undefined && at > i.now) ms = Math.min(ms, at - i.now + AFTER_DUE_MS);
  return ms;
}
