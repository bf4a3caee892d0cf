/** `npm run policies:write`: regenerates the chart's copy of the admission rules (chart-data.ts). */
import { writeFileSync } from "node:fs";
import { CHART_POLICY_FILE, chartPolicyJson } from "./chart-data.js";

const target = process.argv[2] ?? CHART_POLICY_FILE;
writeFileSync(target, chartPolicyJson());
process.stdout.write(`wrote ${target}\n`);
