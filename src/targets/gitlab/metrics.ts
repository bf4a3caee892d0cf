import { Counter, Histogram } from "prom-client";
import { registry } from "../../runtime/metrics.js";

/** Objects written by server-side apply; a quiet pass adds nothing. */
export const applyWrites = new Counter({
  name: "gitlabcore_apply_writes_total",
  help: "Rendered objects written by server-side apply (objects that already matched are not counted).",
  registers: [registry],
});

export const hooksRun = new Counter({
  name: "gitlabcore_hooks_total",
  help: "Chart hooks run, by outcome (succeeded, failed).",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const pruned = new Counter({
  name: "gitlabcore_pruned_total",
  help: "Objects deleted because the render no longer produces them.",
  registers: [registry],
});

export const passSeconds = new Histogram({
  name: "gitlabcore_pass_duration_seconds",
  help: "Duration of one GitLabCore pass (render, hooks, apply, prune), by outcome (applied, failed).",
  labelNames: ["outcome"] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

export const renders = new Counter({
  name: "gitlabcore_renders_total",
  help: "Chart renders asked for, by whether the render cache answered (cached: true, no helm run) or helm ran (false).",
  labelNames: ["cached"] as const,
  registers: [registry],
});

export const preflights = new Counter({
  name: "gitlabcore_preflight_total",
  help: "Upgrade-step preflight dry runs, by outcome (passed, refused).",
  labelNames: ["outcome"] as const,
  registers: [registry],
});
