import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { operatorDashboard } from "../runtime/dashboard.js";
import { type DashboardSpec, dashboardJson } from "../runtime/grafana.js";
import { gitlabDashboard } from "../targets/gitlab/dashboard.js";
import { openbaoDashboard } from "../targets/openbao/dashboard.js";
import { vaultDashboard } from "../targets/vault/dashboard.js";

export const dashboardsHelp = `Usage: platform-operator dashboards [--write FOLDER]

Prints the Grafana dashboards (JSON, one per line) of the operator and of each target, built from
the panels the code declares. With --write, writes one file per dashboard into FOLDER instead
(deploy/chart/platform-operator/dashboards/ in this repository, which the chart ships as
ConfigMaps for Grafana's dashboard sidecar): platform-operator.json, and <target>.json for the
openbao, gitlab and vault targets, which the chart ships only while that target is enabled.`;

/** File name (the chart's key) → dashboard; a target's file is named like its rules/<target>.yaml. */
export const DASHBOARDS: Readonly<Record<string, DashboardSpec>> = {
  "platform-operator.json": operatorDashboard,
  "openbao.json": openbaoDashboard,
  "gitlab.json": gitlabDashboard,
  "vault.json": vaultDashboard,
};

export const dashboardText = (spec: DashboardSpec): string =>
  `${JSON.stringify(dashboardJson(spec), null, 2)}\n`;

export function dashboardsCommand(write?: string): number {
  if (!write) {
    for (const spec of Object.values(DASHBOARDS))
      process.stdout.write(`${JSON.stringify(dashboardJson(spec))}\n`);
    return 0;
  }
  mkdirSync(write, { recursive: true });
  for (const [file, spec] of Object.entries(DASHBOARDS)) {
    writeFileSync(join(write, file), dashboardText(spec));
    process.stderr.write(`wrote ${join(write, file)}\n`);
  }
  return 0;
}
