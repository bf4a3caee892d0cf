import { type DashboardSpec, stat, table, timeseries } from "../../runtime/grafana.js";

// The OpenBaoCluster dashboard: one look answers "does it serve, is it backed up, is anything
// moving". Every metric the openbao target registers is on it (test/unit/dashboards.test.ts).

const SEL = 'namespace=~"$namespace", name=~"$cluster"';
const RESTORE_SEL = 'namespace=~"$namespace", cluster=~"$cluster"';
const BY = "by (namespace, name)";
const LEGEND = "{{namespace}}/{{name}}";

export const openbaoDashboard: DashboardSpec = {
  uid: "platform-operator-openbao",
  title: "platform-operator / OpenBao",
  description:
    "OpenBaoClusters: voters, seal and leader, certificates, backups, upgrades, restores and the operation lock.",
  tags: ["platform-operator", "openbao"],
  variables: [
    { name: "namespace", label: "Namespace", query: "label_values(openbao_cluster_replicas, namespace)" },
    {
      name: "cluster",
      label: "Cluster",
      query: 'label_values(openbao_cluster_replicas{namespace=~"$namespace"}, name)',
    },
  ],
  rows: [
    {
      title: "Clusters",
      panels: [
        stat("Voters wanted", "spec.replicas, summed.", `sum(openbao_cluster_replicas{${SEL}})`),
        stat("Voters ready", "Voter pods Ready, summed.", `sum(openbao_cluster_ready_replicas{${SEL}})`),
        stat(
          "Sealed clusters",
          "Clusters whose OpenBao answers sealed: see the runbook's Sealed cluster.",
          `count(openbao_cluster_sealed{${SEL}} == 1) or vector(0)`,
          { thresholds: [[1, "red"]] },
        ),
        stat(
          "Not initialized",
          "Clusters not initialized yet.",
          `count(openbao_cluster_initialized{${SEL}} == 0) or vector(0)`,
          { thresholds: [[1, "orange"]] },
        ),
        stat(
          "Failed",
          "Clusters in phase Failed (Degraded names the field or step).",
          `count(openbao_cluster_phase{${SEL}, phase="Failed"} == 1) or vector(0)`,
          { thresholds: [[1, "red"]] },
        ),
        stat(
          "Admission policies",
          "1 when the chart's admission policies and bindings were in place at the operator's start.",
          "min(openbao_admission_dependencies_ready)",
          { mappings: { "0": "missing", "1": "in place" }, thresholds: [] },
        ),
        table("Phase per cluster", "The phase each cluster is in.", [
          { expr: `max by (namespace, name, phase) (openbao_cluster_phase{${SEL}} == 1)` },
        ]),
        timeseries("Ready voters", "Ready voter pods against spec.replicas.", [
          { expr: `max ${BY} (openbao_cluster_ready_replicas{${SEL}})`, legend: `${LEGEND} ready` },
          { expr: `max ${BY} (openbao_cluster_replicas{${SEL}})`, legend: `${LEGEND} wanted` },
        ]),
        timeseries("Sealed", "1 while OpenBao answers sealed.", [
          { expr: `max ${BY} (openbao_cluster_sealed{${SEL}})`, legend: LEGEND },
        ]),
        timeseries(
          "Raft peers",
          "Running server pods by what OpenBao's registration labels say: active, standby (unsealed) and sealed. Active + standby below quorum (a majority of spec.replicas) means no leader can be elected: see the runbook's No leader and Lost quorum.",
          [
            {
              expr: `max by (namespace, name, state) (openbao_cluster_raft_peers{${SEL}})`,
              legend: `${LEGEND} {{state}}`,
            },
            {
              expr: `floor(max ${BY} (openbao_cluster_replicas{${SEL}}) / 2) + 1`,
              legend: `${LEGEND} quorum`,
            },
          ],
        ),
        timeseries("Leader changes", "Moves of the active node per hour (step-downs, restarts, elections).", [
          { expr: `sum ${BY} (increase(openbao_cluster_leader_changes_total{${SEL}}[1h]))`, legend: LEGEND },
        ]),
        timeseries(
          "Raft peers removed",
          "Peers the operator removed from Raft before scaling in, per hour.",
          [
            {
              expr: `sum ${BY} (increase(openbao_cluster_raft_peers_removed_total{${SEL}}[1h]))`,
              legend: LEGEND,
            },
          ],
        ),
      ],
    },
    {
      title: "Operations",
      panels: [
        table("Operation lock holder", "Which operation holds each cluster's lock now.", [
          { expr: `max by (namespace, name, operation) (openbao_operation_lock_held{${SEL}} == 1)` },
        ]),
        timeseries("Restores", "Restores ended, succeeded and failed (by reason), per hour.", [
          {
            expr: `sum by (namespace, cluster) (increase(openbao_restore_total{${RESTORE_SEL}}[1h]))`,
            legend: "{{namespace}}/{{cluster}} ended",
          },
          {
            expr: `sum by (namespace, cluster) (increase(openbao_restore_success_total{${RESTORE_SEL}}[1h]))`,
            legend: "{{namespace}}/{{cluster}} succeeded",
          },
          {
            expr: `sum by (namespace, cluster, reason) (increase(openbao_restore_failure_total{${RESTORE_SEL}}[1h]))`,
            legend: "{{namespace}}/{{cluster}} {{reason}}",
          },
        ]),
        timeseries(
          "Restore duration p95",
          "From the restore Job's start to its result.",
          [
            {
              expr: `histogram_quantile(0.95, sum by (namespace, cluster, le) (rate(openbao_restore_duration_seconds_bucket{${RESTORE_SEL}}[1d])))`,
              legend: "{{namespace}}/{{cluster}}",
            },
          ],
          { unit: "s" },
        ),
      ],
    },
    {
      title: "Certificates",
      panels: [
        timeseries(
          "Certificate time left",
          "Until the served certificate expires; the alert fires under 7 days.",
          [
            {
              expr: `min by (namespace, name, type) (openbao_tls_cert_expiry_timestamp{${SEL}}) - time()`,
              legend: "{{namespace}}/{{name}} {{type}}",
            },
          ],
          { unit: "dtdurations" },
        ),
        timeseries(
          "Certificates issued",
          "Server certificates the operator issued per day (first and rotations).",
          [{ expr: `sum ${BY} (increase(openbao_tls_rotation_total{${SEL}}[1d]))`, legend: LEGEND }],
        ),
      ],
    },
    {
      title: "Backups",
      panels: [
        timeseries(
          "Backup age",
          "Since the last successful backup; absent until the first success.",
          [{ expr: `time() - max ${BY} (openbao_backup_last_success_timestamp{${SEL}})`, legend: LEGEND }],
          { width: 8, unit: "dtdurations" },
        ),
        timeseries(
          "Backups failing in a row",
          "status.backup.consecutiveFailures; the alert fires at 3.",
          [{ expr: `max ${BY} (openbao_backup_consecutive_failures{${SEL}})`, legend: LEGEND }],
          { width: 8 },
        ),
        timeseries(
          "Backup running",
          "1 while a backup Job runs.",
          [{ expr: `max ${BY} (openbao_backup_in_progress{${SEL}})`, legend: LEGEND }],
          { width: 8 },
        ),
        timeseries(
          "Backup size",
          "Bytes in the last successful snapshot.",
          [
            { expr: `max ${BY} (openbao_backup_last_size_bytes{${SEL}})`, legend: LEGEND },
            { expr: `max ${BY} (openbao_backup_size_bytes{${SEL}})`, legend: `${LEGEND} (this process)` },
          ],
          { width: 8, unit: "bytes" },
        ),
        timeseries(
          "Backup duration",
          "The last successful backup, and the p95 over a day.",
          [
            { expr: `max ${BY} (openbao_backup_last_duration_seconds{${SEL}})`, legend: `${LEGEND} last` },
            {
              expr: `histogram_quantile(0.95, sum by (namespace, name, le) (rate(openbao_backup_duration_seconds_bucket{${SEL}}[1d])))`,
              legend: `${LEGEND} p95`,
            },
          ],
          { width: 8, unit: "s" },
        ),
        timeseries(
          "Backup results",
          "Attempts ended, succeeded, failed by reason, and snapshots deleted by retention, per day.",
          [
            { expr: `sum ${BY} (increase(openbao_backup_total{${SEL}}[1d]))`, legend: `${LEGEND} ended` },
            {
              expr: `sum ${BY} (increase(openbao_backup_success_total{${SEL}}[1d]))`,
              legend: `${LEGEND} succeeded`,
            },
            {
              expr: `sum by (namespace, name, reason) (increase(openbao_backup_failure_total{${SEL}}[1d]))`,
              legend: `${LEGEND} {{reason}}`,
            },
            {
              expr: `sum ${BY} (increase(openbao_backup_retention_deleted_total{${SEL}}[1d]))`,
              legend: `${LEGEND} retention`,
            },
          ],
          { width: 8 },
        ),
        timeseries(
          "Last verified backup",
          "Since the last restore test that passed (spec.backup.restoreTest), against the test's interval; absent until the first.",
          [
            {
              expr: `time() - max ${BY} (openbao_backup_last_verified_timestamp_seconds{${SEL}})`,
              legend: `${LEGEND} age`,
            },
            {
              expr: `max ${BY} (openbao_backup_restore_test_interval_seconds{${SEL}})`,
              legend: `${LEGEND} interval`,
            },
          ],
          { width: 8, unit: "dtdurations" },
        ),
        timeseries(
          "Restore test failed",
          "1 when the last restore test failed: status.backup.lastVerificationFailureReason says why.",
          [{ expr: `max ${BY} (openbao_backup_verification_failed{${SEL}})`, legend: LEGEND }],
          { width: 8 },
        ),
        timeseries(
          "Restore test duration",
          "Throwaway cluster, restore and checks, per run over a day, by outcome.",
          [
            {
              expr: `sum by (namespace, name, outcome) (increase(openbao_backup_restore_test_duration_seconds_sum{${SEL}}[1d])) / sum by (namespace, name, outcome) (increase(openbao_backup_restore_test_duration_seconds_count{${SEL}}[1d]))`,
              legend: `${LEGEND} {{outcome}}`,
            },
          ],
          { width: 8, unit: "s" },
        ),
      ],
    },
    {
      title: "Upgrades",
      panels: [
        table("Upgrade state", "0 never upgraded, 1 in progress, 2 the last succeeded, 3 failed.", [
          { expr: `max ${BY} (openbao_upgrade_status{${SEL}})` },
        ]),
        timeseries(
          "Rolling upgrade progress",
          "Pods on the target version against the pods to replace, and the partition held.",
          [
            { expr: `max ${BY} (openbao_upgrade_pods_completed{${SEL}})`, legend: `${LEGEND} done` },
            { expr: `max ${BY} (openbao_upgrade_pods_total{${SEL}})`, legend: `${LEGEND} to do` },
            { expr: `max ${BY} (openbao_upgrade_partition{${SEL}})`, legend: `${LEGEND} partition` },
            { expr: `max ${BY} (openbao_upgrade_in_progress{${SEL}})`, legend: `${LEGEND} in progress` },
          ],
        ),
        timeseries("Upgrade results", "Started, succeeded, failed by reason, per day.", [
          {
            expr: `sum by (namespace, name, strategy) (increase(openbao_upgrade_total{${SEL}}[1d]))`,
            legend: `${LEGEND} {{strategy}} started`,
          },
          {
            expr: `sum by (namespace, name, strategy) (increase(openbao_upgrade_success_total{${SEL}}[1d]))`,
            legend: `${LEGEND} {{strategy}} succeeded`,
          },
          {
            expr: `sum by (namespace, name, reason) (increase(openbao_upgrade_failure_total{${SEL}}[1d]))`,
            legend: `${LEGEND} {{reason}}`,
          },
        ]),
        timeseries("Step-downs", "Leader step-downs asked for, and refused or unanswered, per day.", [
          {
            expr: `sum ${BY} (increase(openbao_upgrade_stepdown_total{${SEL}}[1d]))`,
            legend: `${LEGEND} asked`,
          },
          {
            expr: `sum ${BY} (increase(openbao_upgrade_stepdown_failures_total{${SEL}}[1d]))`,
            legend: `${LEGEND} failed`,
          },
        ]),
        timeseries(
          "Upgrade duration p95",
          "Whole upgrades, and one pod's replacement (rolling).",
          [
            {
              expr: `histogram_quantile(0.95, sum by (namespace, name, le) (rate(openbao_upgrade_duration_seconds_bucket{${SEL}}[7d])))`,
              legend: `${LEGEND} upgrade`,
            },
            {
              expr: `histogram_quantile(0.95, sum by (namespace, name, le) (rate(openbao_upgrade_pod_duration_seconds_bucket{${SEL}}[7d])))`,
              legend: `${LEGEND} pod`,
            },
          ],
          { unit: "s" },
        ),
      ],
    },
    {
      title: "Reconciles",
      panels: [
        timeseries(
          "Reconcile errors by step",
          "Passes that ended in an error, by the step that failed.",
          [
            {
              expr: `sum by (namespace, name, step) (rate(openbao_reconcile_errors_total{${SEL}}[5m]))`,
              legend: `${LEGEND} {{step}}`,
            },
          ],
          { width: 8, unit: "ops" },
        ),
        timeseries(
          "Reconcile duration p95",
          "One pass of the workload controller.",
          [
            {
              expr: `histogram_quantile(0.95, sum by (namespace, name, le) (rate(openbao_reconcile_duration_seconds_bucket{${SEL}}[5m])))`,
              legend: LEGEND,
            },
          ],
          { width: 8, unit: "s" },
        ),
        timeseries(
          "OpenBao API requests",
          "Requests the operator sent to OpenBao, by endpoint (a settled cluster sends none).",
          [
            {
              expr: "sum by (method, endpoint) (rate(openbao_api_requests_total[5m]))",
              legend: "{{method}} {{endpoint}}",
            },
          ],
          { width: 8, unit: "reqps" },
        ),
        timeseries(
          "Planned changes (observe-only)",
          "What a real run would change, per action.",
          [
            {
              expr: `sum by (namespace, name, action) (openbao_cluster_planned_changes{${SEL}})`,
              legend: `${LEGEND} {{action}}`,
            },
          ],
          { width: 24 },
        ),
      ],
    },
  ],
};
