import { Counter, Gauge, Histogram } from "prom-client";
import { registry } from "../../runtime/metrics.js";

/** Backend requests by operation (read, write, metadata, delete, login, mount, policy) and outcome; never a path or value. */
export const backendRequests = new Counter({
  name: "ohmlab_backend_requests_total",
  help: "Requests to the secret backend, by target, operation and outcome (ok, not_found, forbidden, invalid, unavailable, error).",
  labelNames: ["target", "operation", "outcome"] as const,
  registers: [registry],
});

export const backendLatency = new Histogram({
  name: "ohmlab_backend_request_duration_seconds",
  help: "Latency of requests to the secret backend, by target and operation.",
  labelNames: ["target", "operation"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const writesTotal = new Counter({
  name: "ohmlab_writes_total",
  help: "Changes written to the secret backend, by target and action (create-path, add-field, update-field, rotate-field, prune-field, adopt, record-rotation, start-rotation-period, delete-path).",
  labelNames: ["target", "action"] as const,
  registers: [registry],
});

export const plannedChanges = new Gauge({
  name: "ohmlab_planned_changes",
  help: "Changes a real run would make, per object and action, as seen by the last reconcile (observe-only mode).",
  labelNames: ["target", "namespace", "name", "action"] as const,
  registers: [registry],
});

export const objectsNotReady = new Gauge({
  name: "ohmlab_objects_not_ready",
  help: "Objects whose Ready condition is not True, per target and reason.",
  labelNames: ["target", "reason"] as const,
  registers: [registry],
});

export const lastReconcileCompleted = new Gauge({
  name: "ohmlab_last_reconcile_completed_timestamp_seconds",
  help: "When the target last completed a reconcile of any object (unix seconds).",
  labelNames: ["target"] as const,
  registers: [registry],
});

export const crdRevision = new Gauge({
  name: "ohmlab_crd_revision_info",
  help: "1 per CRD, labelled with the revision the served CRD carries and the revision this build expects.",
  labelNames: ["target", "crd", "served", "expected"] as const,
  registers: [registry],
});

export const crdRevisionMismatch = new Gauge({
  name: "ohmlab_crd_revision_mismatch",
  help: "1 when the served CRD's schema revision differs from the one this build expects, else 0.",
  labelNames: ["target", "crd"] as const,
  registers: [registry],
});

export const rotationNext = new Gauge({
  name: "ohmlab_rotation_next_timestamp_seconds",
  help: "When rotate.every next regenerates an object's keys (unix seconds); stays put while that rotation has not been written.",
  labelNames: ["target", "namespace", "name"] as const,
  registers: [registry],
});
