import { type DashboardSpec, stat, table, timeseries } from "../../runtime/grafana.js";

// The GitLabCore dashboard: each release's versions, phase and pending upgrade, then passes, hooks,
// applies, prunes, renders and upgrade preflights. Every
// metric the gitlab target registers is on it (test/unit/dashboards.test.ts).

export const gitlabDashboard: DashboardSpec = {
  uid: "platform-operator-gitlabcore",
  title: "platform-operator / GitLabCore",
  description:
    "GitLabCore releases: passes, chart hooks, applies and prunes, renders and upgrade preflights.",
  tags: ["platform-operator", "gitlabcore"],
  variables: [],
  rows: [
    {
      title: "Releases",
      panels: [
        table(
          "Versions per release",
          "The chart and GitLab version each GitLabCore last applied.",
          [
            {
              expr: "max by (namespace, name, chart_version, gitlab_version) (gitlabcore_release_info == 1)",
            },
          ],
          12,
        ),
        table(
          "Phase per release",
          "The phase each GitLabCore is in.",
          [{ expr: "max by (namespace, name, phase) (gitlabcore_phase == 1)" }],
          6,
        ),
        stat(
          "Upgrades pending",
          "Releases whose resolved chart version is not applied yet (an upgrade runs or waits).",
          "sum(gitlabcore_upgrade_pending) or vector(0)",
          { thresholds: [[1, "orange"]] },
        ),
      ],
    },
    {
      title: "Passes",
      panels: [
        stat(
          "Failed passes (1h)",
          "Passes that ended failed (render, hooks, apply).",
          'sum(increase(gitlabcore_pass_duration_seconds_count{outcome="failed"}[1h])) or vector(0)',
          { thresholds: [[1, "red"]] },
        ),
        stat(
          "Hooks failed (1h)",
          "Chart hook Jobs that failed.",
          'sum(increase(gitlabcore_hooks_total{outcome="failed"}[1h])) or vector(0)',
          { thresholds: [[1, "red"]] },
        ),
        stat(
          "Preflights refused (1d)",
          "Upgrade steps whose dry run the API server refused: the upgrade waits, the release keeps running.",
          'sum(increase(gitlabcore_preflight_total{outcome="refused"}[1d])) or vector(0)',
          { thresholds: [[1, "orange"]] },
        ),
        stat(
          "Objects written (1h)",
          "Objects server-side applied; a quiet release writes none.",
          "sum(increase(gitlabcore_apply_writes_total[1h])) or vector(0)",
        ),
        stat(
          "Objects pruned (1d)",
          "Objects deleted because the render no longer has them.",
          "sum(increase(gitlabcore_pruned_total[1d])) or vector(0)",
        ),
        stat(
          "Render cache hits (1h)",
          "Share of renders the cache answered without running helm.",
          'sum(increase(gitlabcore_renders_total{cached="true"}[1h])) / sum(increase(gitlabcore_renders_total[1h]))',
          { unit: "percentunit" },
        ),
        timeseries(
          "Pass duration p95",
          "One pass (render, hooks, apply, prune), by outcome.",
          [
            {
              expr: "histogram_quantile(0.95, sum by (outcome, le) (rate(gitlabcore_pass_duration_seconds_bucket[5m])))",
              legend: "{{outcome}}",
            },
          ],
          { unit: "s" },
        ),
        timeseries("Hooks", "Hook Jobs run, by outcome.", [
          { expr: "sum by (outcome) (increase(gitlabcore_hooks_total[1h]))", legend: "{{outcome}}" },
        ]),
        timeseries("Applies and prunes", "Objects written and deleted, per hour.", [
          { expr: "sum(increase(gitlabcore_apply_writes_total[1h]))", legend: "applied" },
          { expr: "sum(increase(gitlabcore_pruned_total[1h]))", legend: "pruned" },
        ]),
        timeseries(
          "Renders and preflights",
          "Renders by cache use, and upgrade preflights by outcome, per hour.",
          [
            {
              expr: "sum by (cached) (increase(gitlabcore_renders_total[1h]))",
              legend: "render cached={{cached}}",
            },
            {
              expr: "sum by (outcome) (increase(gitlabcore_preflight_total[1h]))",
              legend: "preflight {{outcome}}",
            },
          ],
        ),
      ],
    },
  ],
};
