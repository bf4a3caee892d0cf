import { Counter, Gauge, Histogram } from "prom-client";
import { OpenBaoMetric as M } from "../../../../../apis/openbaocluster-names.js";
import { registry } from "../../../../../runtime/metrics.js";

// Upstream's upgrade metric names, so its dashboards and alerts keep working. Counted once per
// upgrade attempt's start and once per terminal result (in the pass that records it), never per
// reconcile.

const labelNames = ["namespace", "name", "strategy"] as const;

export const upgradeTotal = new Counter({
  name: M.UpgradeTotal,
  help: "Upgrades started.",
  labelNames,
  registers: [registry],
});

export const upgradeSuccessTotal = new Counter({
  name: M.UpgradeSuccessTotal,
  help: "Upgrades that finished with every voter on the target version.",
  labelNames,
  registers: [registry],
});

export const upgradeFailureTotal = new Counter({
  name: M.UpgradeFailureTotal,
  help: "Upgrades that stopped on a failure, by reason.",
  labelNames: [...labelNames, "reason"] as const,
  registers: [registry],
});

export const upgradeDuration = new Histogram({
  name: M.UpgradeDurationSeconds,
  help: "Time from an upgrade's start to its completion, for successful upgrades.",
  labelNames,
  buckets: [30, 60, 120, 300, 600, 1200, 1800, 3600, 7200],
  registers: [registry],
});

/** Upstream's status gauge: 0 none (never upgraded here), 1 running, 2 the last one succeeded, 3 failed. */
export const UpgradeStatusValue = { None: 0, InProgress: 1, Succeeded: 2, Failed: 3 } as const;

export const upgradeStatus = new Gauge({
  name: M.UpgradeStatus,
  help: "Upgrade state of the cluster: 0 none, 1 in progress, 2 the last upgrade succeeded, 3 failed.",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

// Upstream's progress metrics of a rolling upgrade (blue-green records none, as upstream's).
const clusterLabels = ["namespace", "name"] as const;

export const upgradeInProgress = new Gauge({
  name: M.UpgradeInProgress,
  help: "1 while an upgrade of the cluster is in progress, else 0.",
  labelNames: clusterLabels,
  registers: [registry],
});

export const upgradePodsCompleted = new Gauge({
  name: M.UpgradePodsCompleted,
  help: "Pods of the current rolling upgrade that run the target version, Ready and unsealed.",
  labelNames: clusterLabels,
  registers: [registry],
});

export const upgradePodsTotal = new Gauge({
  name: M.UpgradePodsTotal,
  help: "Pods the current rolling upgrade replaces.",
  labelNames: clusterLabels,
  registers: [registry],
});

export const upgradePartition = new Gauge({
  name: M.UpgradePartition,
  help: "The StatefulSet partition the rolling upgrade holds (0: every pod may run the target).",
  labelNames: clusterLabels,
  registers: [registry],
});

export const upgradePodDuration = new Histogram({
  name: M.UpgradePodDurationSeconds,
  help: "Seconds from lowering the partition to a pod until it runs the target version, Ready and unsealed.",
  labelNames: [...clusterLabels, "pod"] as const,
  buckets: [10, 30, 60, 120, 180, 300, 600],
  registers: [registry],
});

export const upgradeStepDowns = new Counter({
  name: M.UpgradeStepDownTotal,
  help: "Leader step-downs the rolling upgrade asked for.",
  labelNames: clusterLabels,
  registers: [registry],
});

export const upgradeStepDownFailures = new Counter({
  name: M.UpgradeStepDownFailuresTotal,
  help: "Leader step-downs OpenBao refused or did not answer.",
  labelNames: clusterLabels,
  registers: [registry],
});

type ClusterLabels = { namespace: string; name: string };

/** Where a rolling upgrade stands, from status.upgrade (so it is right again after a restart). */
export function showRollingProgress(
  labels: ClusterLabels,
  progress: { completed: number; total: number; partition: number },
): void {
  upgradeInProgress.set(labels, 1);
  upgradePodsCompleted.set(labels, progress.completed);
  upgradePodsTotal.set(labels, progress.total);
  upgradePartition.set(labels, progress.partition);
}

/** The rolling upgrade ended: succeeded with every pod replaced, or stopped on a failure. */
export function endRollingProgress(labels: ClusterLabels, succeeded: { total: number } | undefined): void {
  upgradeInProgress.set(labels, 0);
  if (succeeded) {
    upgradePodsCompleted.set(labels, succeeded.total);
    upgradePodsTotal.set(labels, succeeded.total);
    upgradePartition.set(labels, 0);
  }
}

export function forgetUpgradeMetrics(namespace: string, name: string): void {
  const labels = { namespace, name };
  for (const g of [
    upgradeStatus,
    upgradeInProgress,
    upgradePodsCompleted,
    upgradePodsTotal,
    upgradePartition,
  ])
    g.remove(labels);
  upgradeStepDowns.remove(labels);
  upgradeStepDownFailures.remove(labels);
}
