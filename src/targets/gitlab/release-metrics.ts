/**
 * One series per GitLabCore, from the status each pass writes: what runs (chart and GitLab
 * version), where it is (phase), and whether an upgrade waits (target differs from what is applied).
 * A dashboard and an alert can then name the release, which the target's counters cannot.
 */
import { Gauge } from "prom-client";
import type { GitLabCoreStatus } from "../../apis/gitlabcore.js";
import { GitLabCorePhases } from "../../apis/gitlabcore-names.js";
import { registry } from "../../runtime/metrics.js";

export const releaseInfo = new Gauge({
  name: "gitlabcore_release_info",
  help: "1 for the chart version and GitLab version a GitLabCore last applied.",
  labelNames: ["namespace", "name", "chart_version", "gitlab_version"] as const,
  registers: [registry],
});

export const releasePhase = new Gauge({
  name: "gitlabcore_phase",
  help: "1 for the phase each GitLabCore is in (status.phase), 0 for the others.",
  labelNames: ["namespace", "name", "phase"] as const,
  registers: [registry],
});

export const upgradePending = new Gauge({
  name: "gitlabcore_upgrade_pending",
  help: "1 while the chart version spec.version resolved to is not the one applied yet (an upgrade runs or waits).",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

/** Label values last published per release, so a change of version replaces its series. */
const published = new Map<string, { chart: string; gitlab: string }>();

export function publishReleaseMetrics(namespace: string, name: string, status: GitLabCoreStatus): void {
  const key = `${namespace}/${name}`;
  const chart = status.version ?? "";
  const gitlab = status.gitlabVersion ?? "";
  const before = published.get(key);
  if (before && (before.chart !== chart || before.gitlab !== gitlab))
    releaseInfo.remove({ namespace, name, chart_version: before.chart, gitlab_version: before.gitlab });
  if (chart !== "") {
    releaseInfo.set({ namespace, name, chart_version: chart, gitlab_version: gitlab }, 1);
    published.set(key, { chart, gitlab });
  } else published.delete(key);
  if (status.phase)
    for (const phase of GitLabCorePhases)
      releasePhase.set({ namespace, name, phase }, phase === status.phase ? 1 : 0);
  const pending = status.targetVersion !== undefined && status.targetVersion !== status.version;
  upgradePending.set({ namespace, name }, pending ? 1 : 0);
}

export function forgetReleaseMetrics(namespace: string, name: string): void {
  const before = published.get(`${namespace}/${name}`);
  if (before)
    releaseInfo.remove({ namespace, name, chart_version: before.chart, gitlab_version: before.gitlab });
  published.delete(`${namespace}/${name}`);
  for (const phase of GitLabCorePhases) releasePhase.remove({ namespace, name, phase });
  upgradePending.remove({ namespace, name });
}
