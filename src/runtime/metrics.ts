import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * One registry per process: every target's manager shares the single /metrics endpoint and tells
 * its series apart by the `controller` label, the way controller-runtime does.
 */
export const registry = new Registry();
/**
 * The event-loop lag histogram samples with a timer of this period. prom-client's default, 10 ms,
 * wakes an idle process a hundred times a second: measured on Node 24, 7 ms of CPU per second,
 * nearly all of what a quiet operator spends. Once a second still catches a loop blocked for long
 * (the sample due during the block comes late by it) and costs next to nothing.
 */
export const EVENT_LOOP_SAMPLE_MS = 1000;
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

export const reconcileTotal = new Counter({
  name: "controller_runtime_reconcile_total",
  help: "Reconciles per controller and result (success, error, requeue_after).",
  labelNames: ["controller", "result"] as const,
  registers: [registry],
});

export const reconcileErrors = new Counter({
  name: "controller_runtime_reconcile_errors_total",
  help: "Reconciles that returned an error, per controller.",
  labelNames: ["controller"] as const,
  registers: [registry],
});

export const reconcileTerminalErrors = new Counter({
  name: "controller_runtime_terminal_reconcile_errors_total",
  help: "Reconciles that failed in a way only a change to the object can fix, per controller.",
  labelNames: ["controller"] as const,
  registers: [registry],
});

export const reconcileDeferred = new Counter({
  name: "controller_runtime_reconcile_deferred_total",
  help: "Passes deferred: the cache had not shown this process's own last write to the object yet, or the pass waits for work under way in this process.",
  labelNames: ["controller"] as const,
  registers: [registry],
});

export const reconcileTime = new Histogram({
  name: "controller_runtime_reconcile_time_seconds",
  help: "Time spent in one reconcile, per controller.",
  labelNames: ["controller"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const activeWorkers = new Gauge({
  name: "controller_runtime_active_workers",
  help: "Reconciles running now, per controller.",
  labelNames: ["controller"] as const,
  registers: [registry],
});

export const workqueueDepth = new Gauge({
  name: "workqueue_depth",
  help: "Keys waiting in the queue.",
  labelNames: ["name"] as const,
  registers: [registry],
});

export const workqueueAdds = new Counter({
  name: "workqueue_adds_total",
  help: "Keys added to the queue.",
  labelNames: ["name"] as const,
  registers: [registry],
});

export const workqueueRetries = new Counter({
  name: "workqueue_retries_total",
  help: "Keys re-added after a failure, with backoff.",
  labelNames: ["name"] as const,
  registers: [registry],
});

export const workqueueQueueDuration = new Histogram({
  name: "workqueue_queue_duration_seconds",
  help: "Time a key waits in the queue before a worker takes it.",
  labelNames: ["name"] as const,
  buckets: [0.001, 0.01, 0.1, 1, 10, 60, 300],
  registers: [registry],
});

export const restClientRequests = new Counter({
  name: "rest_client_requests_total",
  help: "HTTP requests to the Kubernetes API server, by status code (<error> when no response came), method and host.",
  labelNames: ["code", "method", "host"] as const,
  registers: [registry],
});

/**
 * The dry runs among those requests (dryRun=All): they store nothing, so writes that reached storage
 * are rest_client_requests_total's writes minus these (observe-only passes are proven that way).
 */
export const restClientDryRunRequests = new Counter({
  name: "rest_client_dry_run_requests_total",
  help: "Requests to the Kubernetes API server made with dryRun=All (stored nothing), by method; counted in rest_client_requests_total too.",
  labelNames: ["method"] as const,
  registers: [registry],
});

interface CountsConnections {
  readonly protocol: string;
  connections(): Record<string, number>;
}
// Weak: a client that is dropped without close() must not be kept alive by its metrics.
const transports = new Set<WeakRef<CountsConnections>>();

/** Counts this transport's connections under rest_client_connections while it lives. */
export function trackTransport(t: CountsConnections): void {
  transports.add(new WeakRef(t));
}

export const restClientConnections = new Gauge({
  name: "rest_client_connections",
  help: "Open connections to the Kubernetes API server, by protocol (h2, http/1.1) and pool (main and lease for HTTP/2; request, watch and lease for HTTP/1.1).",
  labelNames: ["protocol", "pool"] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const ref of transports) {
      const t = ref.deref();
      if (!t) {
        transports.delete(ref);
        continue;
      }
      for (const [pool, n] of Object.entries(t.connections())) this.inc({ protocol: t.protocol, pool }, n);
    }
  },
});

export const leaderElectionMasterStatus = new Gauge({
  name: "leader_election_master_status",
  help: "1 while this process holds the named Lease, 0 otherwise.",
  labelNames: ["name"] as const,
  registers: [registry],
});

/**
 * Reads the cached reader sent to the API server instead of answering from an informer, by resource,
 * verb and why: `uncovered` (no synced informer covers the kind, scope or selector) or `own-write`
 * (the cache had not yet shown a write of this process). A settled target's passes add none.
 */
export const cachedReaderLiveReads = new Counter({
  name: "cached_reader_live_reads_total",
  help: "Reads sent to the API server by the cached reader, by resource, verb and reason (uncovered: no synced informer covers them; own-write: the cache had not yet shown this process's write).",
  labelNames: ["resource", "verb", "reason"] as const,
  registers: [registry],
});

export const informerRelists = new Counter({
  name: "informer_relists_total",
  help: "Full lists an informer made after its first, because its watch could not resume from the last resourceVersion, per resource.",
  labelNames: ["resource"] as const,
  registers: [registry],
});

export const eventsDropped = new Counter({
  name: "event_recorder_dropped_total",
  help: "Events not written, by cause: spam (rate limit per object and reason), queue_full (too many waiting), no_api_version (incomplete object reference), write_failed (refused or unreachable API server).",
  labelNames: ["cause"] as const,
  registers: [registry],
});
