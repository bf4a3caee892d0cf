import { type DashboardSpec, layout, type PanelSpec } from "../../src/runtime/grafana.js";

// A picture of a dashboard as Grafana lays it out (rows, the 24-column grid, panel sizes), drawn
// from the same panel declarations the chart's JSON comes from, so a reviewer sees what a user's
// Grafana will show without a Grafana here. Panels carry no data: each shows its title, what it
// plots (the legend of each query, or the metric a stat reads) and its unit.

const WIDTH = 1600;
const COLUMN = WIDTH / 24;
const GRID_ROW = 30;
const MARGIN = 4;
const FONT = "DejaVu Sans, sans-serif";

export const xmlText = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Cuts text to what fits `px` at a font size (DejaVu Sans averages ~0.55 em per character). */
function fit(text: string, px: number, size: number): string {
  const max = Math.max(4, Math.floor(px / (size * 0.55)));
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Words wrapped into lines that fit `px`, at most `max` lines. */
function wrap(text: string, px: number, size: number, max: number): string[] {
  const width = Math.max(8, Math.floor(px / (size * 0.55)));
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.length <= max
    ? lines
    : [...lines.slice(0, max - 1), fit(lines.slice(max - 1).join(" "), px, size)];
}

function what(panel: PanelSpec): string[] {
  if (panel.type === "stat") {
    const q = panel.queries[0]?.expr ?? "";
    return [q];
  }
  return panel.queries.map((q) => q.legend ?? q.expr);
}

function panelSvg(p: ReturnType<typeof layout>[number]): string {
  const x = p.x * COLUMN + MARGIN;
  const y = p.y * GRID_ROW + MARGIN;
  const w = p.w * COLUMN - 2 * MARGIN;
  const h = p.h * GRID_ROW - 2 * MARGIN;
  const parts = [
    `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="4" fill="#181b1f" stroke="#2c3235"/>`,
    `<text x="${x + 10}" y="${y + 20}" font-size="14" font-weight="bold" fill="#d8d9da">${xmlText(fit(p.panel.title, w - 70, 14))}</text>`,
    `<text x="${x + w - 10}" y="${y + 20}" font-size="10" fill="#6e7178" text-anchor="end">${xmlText(p.panel.type)}${p.panel.unit ? ` · ${xmlText(p.panel.unit)}` : ""}</text>`,
  ];
  const lines = what(p.panel);
  // What the panel is for, under its title: the description a user sees on hover in Grafana.
  const room = p.panel.type === "stat" ? 2 : Math.max(1, Math.floor((h - 60 - lines.length * 14) / 14));
  wrap(p.panel.description, w - 20, 11, room).forEach((line, i) => {
    parts.push(
      `<text x="${x + 10}" y="${y + 38 + i * 14}" font-size="11" fill="#8e8e8e">${xmlText(line)}</text>`,
    );
  });
  if (p.panel.type === "stat") {
    parts.push(
      `<text x="${x + 10}" y="${y + h - 12}" font-size="11" fill="#73bf69">${xmlText(fit(lines[0] ?? "", w - 20, 11))}</text>`,
    );
  } else {
    if (p.panel.type === "timeseries") {
      // Axes, so the panel reads as a graph.
      parts.push(
        `<polyline points="${x + 10},${y + 34 + Math.min(room, 2) * 14} ${x + 10},${y + h - 16 - lines.length * 14} ${x + w - 10},${y + h - 16 - lines.length * 14}" fill="none" stroke="#34383e"/>`,
      );
    }
    const colors = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2"];
    lines.forEach((line, i) => {
      const ly = y + h - 10 - (lines.length - 1 - i) * 14;
      parts.push(
        `<rect x="${x + 10}" y="${ly - 8}" width="10" height="3" fill="${colors[i % colors.length]}"/>`,
        `<text x="${x + 26}" y="${ly}" font-size="11" fill="#ccccdc">${xmlText(fit(line, w - 36, 11))}</text>`,
      );
    });
  }
  return parts.join("");
}

/** The dashboard as SVG: a title bar, each row's header, each panel in its grid cell. */
export function dashboardSvg(spec: DashboardSpec): string {
  const placed = layout(spec);
  const headerRows = [...new Set(placed.map((p) => p.row))];
  const bottom = Math.max(...placed.map((p) => p.y + p.h)) * GRID_ROW;
  const TOP = 50;
  const height = TOP + bottom + 10;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="${FONT}">`,
    `<rect width="100%" height="100%" fill="#111217"/>`,
    `<text x="12" y="32" font-size="20" fill="#d8d9da">${xmlText(spec.title)}</text>`,
    `<text x="${WIDTH - 12}" y="32" font-size="12" fill="#6e7178" text-anchor="end">${xmlText(
      ["Data source", ...spec.variables.map((v) => v.label)].join(" · "),
    )}</text>`,
    `<g transform="translate(0, ${TOP})">`,
  ];
  for (const row of headerRows) {
    const first = placed.find((p) => p.row === row);
    if (!first) continue;
    const y = (first.y - 1) * GRID_ROW;
    out.push(`<text x="12" y="${y + 22}" font-size="15" fill="#d8d9da">▾ ${xmlText(row)}</text>`);
  }
  for (const p of placed) out.push(panelSvg(p));
  out.push("</g></svg>");
  return out.join("\n");
}
