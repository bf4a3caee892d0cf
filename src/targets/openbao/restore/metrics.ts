import { Counter, Histogram } from "prom-client";
import { OpenBaoMetric as M } from "../../../apis/openbaocluster-names.js";
import { registry } from "../../../runtime/metrics.js";

// Upstream's restore metric names. Counted once, in the pass that writes the terminal phase.

const labelNames = ["namespace", "cluster"] as const;

export const restoreTotal = new Counter({
  name: M.RestoreTotal,
  help: "Restores that reached a terminal phase.",
  labelNames,
  registers: [registry],
});

export const restoreSuccessTotal = new Counter({
  name: M.RestoreSuccessTotal,
  help: "Restores whose Job completed.",
  labelNames,
  registers: [registry],
});

export const restoreFailureTotal = new Counter({
  name: M.RestoreFailureTotal,
  help: "Restores that failed, by reason.",
  labelNames: [...labelNames, "reason"] as const,
  registers: [registry],
});

export const restoreDuration = new Histogram({
  name: M.RestoreDurationSeconds,
  help: "Time from the restore Job's start to its terminal result.",
  labelNames,
  buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
  registers: [registry],
});
