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

/** Upstream's status gauge: 0 idle, 1 in progress, 2 failed (paused and refused count as idle). */
export const UpgradeStatusValue = { Idle: 0, InProgress: 1, Failed: 2 } as const;

export const upgradeStatus = new Gauge({
  name: M.UpgradeStatus,
  help: "Upgrade state of the cluster: 0 idle, 1 in progress, 2 failed.",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

export function forgetUpgradeMetrics(namespace: string, name: string): void {
  upgradeStatus.remove({ namespace, name });
}
