import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { DASHBOARDS } from "../../src/cli/dashboards.js";
import { dashboardSvg } from "./dashboard-picture.js";

// `npm run dashboards:png`: a PNG of each dashboard into docs/dashboards/ (or the folder given), for
// the docs and for review. Uses the machine's fonts (DejaVu Sans where installed).

export function dashboardPng(svg: string): Buffer {
  return new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } })
    .render()
    .asPng();
}

function main(folder: string): void {
  mkdirSync(folder, { recursive: true });
  for (const [file, spec] of Object.entries(DASHBOARDS)) {
    const out = join(folder, file.replace(/\.json$/, ".png"));
    writeFileSync(out, dashboardPng(dashboardSvg(spec)));
    process.stderr.write(`wrote ${out}\n`);
  }
}

if (process.argv[1]?.endsWith("render-dashboards.js")) main(process.argv[2] ?? "docs/dashboards");
