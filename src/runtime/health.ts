import type { ResourceType } from "./types.js";

/**
 * Liveness: the process is alive while its loops make progress. Two things can stop silently and
 * would never recover without a restart, so these are what a failing /healthz reports:
 * - an informer whose list/watch loop has shown no sign of life (list page, watch event, bookmark,
 *   a watch ended on time) for longer than the threshold: its cache no longer follows the cluster;
 * - a work queue with keys waiting while no worker has taken or finished a key for that long:
 *   every worker is stuck in a reconcile that does not return.
 * A quiet cluster is not stuck: a watch with nothing to say has its connection pinged after two
 * bookmark intervals (2 minutes) of silence, and an answer counts as progress, so the default
 * leaves more than twice that gap. Neither is an empty queue, nor a standby whose
 * controllers have not started.
 */
export const DEFAULT_STUCK_AFTER_MS = 5 * 60_000;

export interface WatchLoop {
  readonly type: ResourceType;
  stalledScopes(thresholdMs: number, now?: number): string[];
}

export interface WorkLoop {
  readonly name: string;
  readonly queue: { readonly length: number };
  stalledForMs(now?: number): number;
}

/** One line per stuck loop; empty when every loop made progress within `thresholdMs`. */
export function livenessProblems(
  watches: Iterable<WatchLoop>,
  workers: Iterable<WorkLoop>,
  thresholdMs: number,
  now = performance.now(),
): string[] {
  const seconds = Math.round(thresholdMs / 1000);
  const problems: string[] = [];
  for (const w of watches) {
    for (const scope of w.stalledScopes(thresholdMs, now)) {
      const where = scope === "*" ? "all namespaces" : `namespace ${scope}`;
      problems.push(`informer ${w.type.plural} (${where}): no list or watch progress for over ${seconds}s`);
    }
  }
  for (const c of workers) {
    if (c.stalledForMs(now) > thresholdMs) {
      problems.push(
        `controller ${c.name}: ${c.queue.length} keys waiting, no worker progress for over ${seconds}s`,
      );
    }
  }
  return problems;
}
