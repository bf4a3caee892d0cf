import { type DashboardSpec, stat, timeseries } from "./grafana.js";

/**
 * The operator's own dashboard: processes, leadership, reconciles, queues, the API server and
 * watches, for every target at once (a target's own dashboard shows its objects).
 */
export const operatorDashboard: DashboardSpec = {
  uid: "platform-operator",
  title: "platform-operator",
  description:
    "The operator's processes: leadership, reconciles, work queues, API server traffic and watches.",
  tags: ["platform-operator"],
  variables: [{ name: "job", label: "Job", query: "label_values(up, job)", includeAll: false }],
  rows: [
    {
      title: "Processes",
      panels: [
        stat("Processes up", "Operator processes Prometheus scrapes.", 'sum(up{job="$job"})', { width: 4 }),
        stat(
          "Leaders",
          "Leases held: one per enabled target when all is well.",
          'sum(leader_election_master_status{job="$job"})',
          { width: 4 },
        ),
        stat(
          "Reconciles running",
          "Reconciles in flight now, all controllers.",
          'sum(controller_runtime_active_workers{job="$job"})',
          { width: 4 },
        ),
        stat(
          "Events dropped (1h)",
          "Events the recorder did not write (spam limits, a full queue).",
          'sum(increase(event_recorder_dropped_total{job="$job"}[1h]))',
          { width: 4, thresholds: [[1, "orange"]] },
        ),
        timeseries(
          "Process memory",
          "Resident memory and V8 heap in use, per process.",
          [
            { expr: 'process_resident_memory_bytes{job="$job"}', legend: "{{pod}} RSS" },
            { expr: 'nodejs_heap_size_used_bytes{job="$job"}', legend: "{{pod}} heap" },
          ],
          { width: 8, height: 4, unit: "bytes" },
        ),
      ],
    },
    {
      title: "Reconciles",
      panels: [
        timeseries(
          "Reconciles by result",
          "Per controller: success, error, requeue_after, requeue; and passes deferred until the cache showed the operator's own last write or work under way in the operator ended.",
          [
            {
              expr: 'sum by (controller, result) (rate(controller_runtime_reconcile_total{job="$job"}[5m]))',
              legend: "{{controller}} {{result}}",
            },
            {
              expr: 'sum by (controller) (rate(controller_runtime_reconcile_deferred_total{job="$job"}[5m]))',
              legend: "{{controller}} deferred (own write not seen yet, or work under way)",
            },
          ],
          { unit: "ops" },
        ),
        timeseries(
          "Reconcile errors",
          "Errors retried with backoff, and terminal errors only a change to the object fixes.",
          [
            {
              expr: 'sum by (controller) (rate(controller_runtime_reconcile_errors_total{job="$job"}[5m]))',
              legend: "{{controller}}",
            },
            {
              expr: 'sum by (controller) (rate(controller_runtime_terminal_reconcile_errors_total{job="$job"}[5m]))',
              legend: "{{controller}} terminal",
            },
          ],
          { unit: "ops" },
        ),
        timeseries(
          "Reconcile time p95",
          "95th percentile of one reconcile's duration.",
          [
            {
              expr: 'histogram_quantile(0.95, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{job="$job"}[5m])))',
              legend: "{{controller}}",
            },
          ],
          { unit: "s" },
        ),
        timeseries(
          "Queue wait p95",
          "How long a key waits before a worker takes it.",
          [
            {
              expr: 'histogram_quantile(0.95, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{job="$job"}[5m])))',
              legend: "{{name}}",
            },
          ],
          { unit: "s" },
        ),
        timeseries(
          "Work queue depth",
          "Keys waiting.",
          [{ expr: 'sum by (name) (workqueue_depth{job="$job"})', legend: "{{name}}" }],
          { width: 8 },
        ),
        timeseries(
          "Work queue adds",
          "Keys added per second.",
          [{ expr: 'sum by (name) (rate(workqueue_adds_total{job="$job"}[5m]))', legend: "{{name}}" }],
          { width: 8, unit: "ops" },
        ),
        timeseries(
          "Work queue retries",
          "Keys re-added after a failure, with backoff.",
          [{ expr: 'sum by (name) (rate(workqueue_retries_total{job="$job"}[5m]))', legend: "{{name}}" }],
          { width: 8, unit: "ops" },
        ),
      ],
    },
    {
      title: "Kubernetes API",
      panels: [
        timeseries(
          "API requests by code",
          "Requests to the API server by status code and method.",
          [
            {
              expr: 'sum by (code, method) (rate(rest_client_requests_total{job="$job"}[5m]))',
              legend: "{{method}} {{code}}",
            },
          ],
          { unit: "reqps" },
        ),
        timeseries(
          "Dry runs",
          "Requests made with dryRun=All (observe-only, preflight).",
          [
            {
              expr: 'sum by (method) (rate(rest_client_dry_run_requests_total{job="$job"}[5m]))',
              legend: "{{method}}",
            },
          ],
          { unit: "reqps" },
        ),
        timeseries(
          "Connections",
          "Open connections to the API server by protocol and pool.",
          [
            {
              expr: 'sum by (protocol, pool) (rest_client_connections{job="$job"})',
              legend: "{{protocol}} {{pool}}",
            },
          ],
          { width: 8 },
        ),
        timeseries(
          "Live reads",
          "Reads the cache could not answer, sent to the API server, by resource and reason.",
          [
            {
              expr: 'sum by (resource, reason) (rate(cached_reader_live_reads_total{job="$job"}[5m]))',
              legend: "{{resource}} {{reason}}",
            },
          ],
          { width: 8, unit: "reqps" },
        ),
        timeseries(
          "Relists",
          "Full lists after a watch could not resume: a quiet operator makes none.",
          [
            {
              expr: 'sum by (resource) (increase(informer_relists_total{job="$job"}[1h]))',
              legend: "{{resource}}",
            },
          ],
          { width: 8 },
        ),
      ],
    },
  ],
};
