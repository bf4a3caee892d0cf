import { type DashboardSpec, stat, timeseries } from "../../runtime/grafana.js";

// The VaultSeed dashboard: is every path seeded, what would change, and how OpenBao answers. Every
// metric the vault target registers is on it (test/unit/dashboards.test.ts).

const T = 'target=~"$target"';

export const vaultDashboard: DashboardSpec = {
  uid: "platform-operator-vaultseed",
  title: "platform-operator / VaultSeed",
  description:
    "VaultSeeds: Ready, Stalled and Drifted objects, planned changes, writes, OpenBao's answers and rotations.",
  tags: ["platform-operator", "vaultseed"],
  variables: [{ name: "target", label: "Target", query: "label_values(ohmlab_objects_not_ready, target)" }],
  rows: [
    {
      title: "Objects",
      panels: [
        stat(
          "Not ready",
          "VaultSeeds whose Ready condition is not True.",
          `sum(ohmlab_objects_not_ready{${T}}) or vector(0)`,
          { thresholds: [[1, "orange"]] },
        ),
        stat(
          "Stalled",
          "Not ready for a reason only a change fixes (invalid spec, cycle, forbidden prefix, mount).",
          `sum(ohmlab_objects_not_ready{${T}, reason=~"InvalidSpec|InvalidRotation|RefCycle|MountNotFound|UnsupportedMount|BackendRejected"}) or vector(0)`,
          { thresholds: [[1, "red"]] },
        ),
        stat(
          "Drifted (observe-only)",
          "Changes a real run would make.",
          `sum(ohmlab_planned_changes{${T}}) or vector(0)`,
          { thresholds: [[1, "orange"]] },
        ),
        stat(
          "Last reconcile",
          "Since the target last completed a reconcile of any object.",
          `time() - max(ohmlab_last_reconcile_completed_timestamp_seconds{${T}})`,
          { unit: "dtdurations" },
        ),
        stat(
          "CRD revision",
          "1 when the served VaultSeed CRD is not the revision this build expects.",
          `max(ohmlab_crd_revision_mismatch{${T}}) or vector(0)`,
          { mappings: { "0": "current", "1": "mismatch" }, thresholds: [[1, "red"]] },
        ),
        stat(
          "CRDs served",
          "CRD revisions seen (labels: served and expected revision).",
          `count(ohmlab_crd_revision_info{${T}})`,
        ),
        timeseries("Not ready by reason", "VaultSeeds not Ready, by the reason of their condition.", [
          { expr: `sum by (reason) (ohmlab_objects_not_ready{${T}})`, legend: "{{reason}}" },
        ]),
        timeseries("Planned changes", "Observe-only: what a real run would change, per object and action.", [
          {
            expr: `sum by (namespace, name, action) (ohmlab_planned_changes{${T}})`,
            legend: "{{namespace}}/{{name}} {{action}}",
          },
        ]),
      ],
    },
    {
      title: "OpenBao",
      panels: [
        timeseries(
          "Writes",
          "Changes written, by action (create-path, add-field, update-field, rotate-field, prune-field, ...).",
          [{ expr: `sum by (action) (rate(ohmlab_writes_total{${T}}[5m]))`, legend: "{{action}}" }],
          { width: 8, unit: "ops" },
        ),
        timeseries(
          "Requests by outcome",
          "OpenBao's answers: ok, not_found, forbidden, invalid, unavailable, error.",
          [
            {
              expr: `sum by (operation, outcome) (rate(ohmlab_backend_requests_total{${T}}[5m]))`,
              legend: "{{operation}} {{outcome}}",
            },
          ],
          { width: 8, unit: "reqps" },
        ),
        timeseries(
          "Request latency p95",
          "Per operation.",
          [
            {
              expr: `histogram_quantile(0.95, sum by (operation, le) (rate(ohmlab_backend_request_duration_seconds_bucket{${T}}[5m])))`,
              legend: "{{operation}}",
            },
          ],
          { width: 8, unit: "s" },
        ),
        timeseries(
          "Next rotation",
          "When rotate.every next regenerates each object's keys.",
          [
            {
              expr: `max by (namespace, name) (ohmlab_rotation_next_timestamp_seconds{${T}}) - time()`,
              legend: "{{namespace}}/{{name}}",
            },
          ],
          { width: 24, unit: "dtdurations" },
        ),
      ],
    },
  ],
};
