/**
 * Grafana dashboards as data: each target describes its panels with these helpers and the CLI
 * writes the JSON the chart ships (`platform-operator dashboards --write`). Panels are laid out in
 * rows of Grafana's 24-column grid here, so a target only says what to show, in what order.
 * Domain-free: the queries come from the targets.
 */

export type Unit =
  | "short"
  | "s"
  | "dtdurations"
  | "bytes"
  | "percentunit"
  | "reqps"
  | "ops"
  | "dateTimeFromNow";

export interface Query {
  expr: string;
  legend?: string;
}

export interface PanelSpec {
  type: "stat" | "timeseries" | "table" | "state-timeline";
  title: string;
  description: string;
  queries: Query[];
  unit?: Unit;
  /** Columns of 24; the row's panels are placed left to right and wrap. */
  width: number;
  height?: number;
  /** Stat panels: thresholds as [value, color] steps above the base green. */
  thresholds?: [number, string][];
  /** Value text for numbers (e.g. 0 → "unsealed"). */
  mappings?: Record<string, string>;
}

export interface RowSpec {
  title: string;
  panels: PanelSpec[];
}

export interface Variable {
  name: string;
  label: string;
  /** A PromQL label_values() query; the datasource variable is always first. */
  query: string;
  includeAll?: boolean;
}

export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  tags: string[];
  variables: Variable[];
  rows: RowSpec[];
}

// Grafana's variable syntax, not a template literal: the dashboard's datasource variable.
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana expands it, not JavaScript
const DATASOURCE = { type: "prometheus", uid: "${datasource}" } as const;
const GRID_COLUMNS = 24;

type Json = Record<string, unknown>;

export const stat = (
  title: string,
  description: string,
  expr: string,
  opts: Partial<Omit<PanelSpec, "type" | "title" | "description" | "queries">> & { legend?: string } = {},
): PanelSpec => ({
  type: "stat",
  title,
  description,
  queries: [{ expr, ...(opts.legend ? { legend: opts.legend } : {}) }],
  width: opts.width ?? 4,
  height: opts.height ?? 4,
  ...(opts.unit ? { unit: opts.unit } : {}),
  ...(opts.thresholds ? { thresholds: opts.thresholds } : {}),
  ...(opts.mappings ? { mappings: opts.mappings } : {}),
});

export const timeseries = (
  title: string,
  description: string,
  queries: Query[],
  opts: Partial<Omit<PanelSpec, "type" | "title" | "description" | "queries">> = {},
): PanelSpec => ({
  type: "timeseries",
  title,
  description,
  queries,
  width: opts.width ?? 12,
  height: opts.height ?? 8,
  ...(opts.unit ? { unit: opts.unit } : {}),
});

export const table = (
  title: string,
  description: string,
  queries: Query[],
  width = 24,
  height = 8,
): PanelSpec => ({
  type: "table",
  title,
  description,
  queries,
  width,
  height,
});

/** Every PromQL expression of a dashboard, panel by panel (for checks and pictures). */
export function queriesOf(spec: DashboardSpec): { panel: string; expr: string }[] {
  return spec.rows.flatMap((r) =>
    r.panels.flatMap((p) => p.queries.map((q) => ({ panel: p.title, expr: q.expr }))),
  );
}

/** Places the rows' panels on the grid: row headers full width, panels left to right, wrapping. */
export function layout(
  spec: DashboardSpec,
): { row: string; panel: PanelSpec; x: number; y: number; w: number; h: number }[] {
  const placed: { row: string; panel: PanelSpec; x: number; y: number; w: number; h: number }[] = [];
  let y = 0;
  for (const row of spec.rows) {
    y += 1; // the row header
    let x = 0;
    let lineHeight = 0;
    for (const panel of row.panels) {
      const w = Math.min(Math.max(1, panel.width), GRID_COLUMNS);
      const h = panel.height ?? 8;
      if (x + w > GRID_COLUMNS) {
        y += lineHeight;
        x = 0;
        lineHeight = 0;
      }
      placed.push({ row: row.title, panel, x, y, w, h });
      x += w;
      lineHeight = Math.max(lineHeight, h);
    }
    y += lineHeight;
  }
  return placed;
}

function panelJson(p: PanelSpec, id: number, gridPos: { x: number; y: number; w: number; h: number }): Json {
  const thresholds = {
    mode: "absolute",
    steps: [
      { color: "green", value: null },
      ...(p.thresholds ?? []).map(([value, color]) => ({ color, value })),
    ],
  };
  const mappings = Object.entries(p.mappings ?? {}).map(([value, text]) => ({
    type: "value",
    options: { [value]: { text } },
  }));
  return {
    id,
    type: p.type,
    title: p.title,
    description: p.description,
    gridPos,
    datasource: DATASOURCE,
    fieldConfig: { defaults: { unit: p.unit ?? "short", thresholds, mappings }, overrides: [] },
    ...(p.type === "table" ? { options: { showHeader: true } } : {}),
    targets: p.queries.map((q, i) => ({
      datasource: DATASOURCE,
      expr: q.expr,
      ...(q.legend ? { legendFormat: q.legend } : {}),
      ...(p.type === "table" ? { format: "table", instant: true } : {}),
      refId: String.fromCharCode(65 + i),
    })),
  };
}

/** The dashboard JSON Grafana imports (schema 39, the datasource chosen by a variable). */
export function dashboardJson(spec: DashboardSpec): Json {
  const panels: Json[] = [];
  let id = 1;
  let currentRow: string | undefined;
  for (const p of layout(spec)) {
    if (p.row !== currentRow) {
      currentRow = p.row;
      panels.push({
        id: id++,
        type: "row",
        title: p.row,
        collapsed: false,
        gridPos: { x: 0, y: p.y - 1, w: 24, h: 1 },
        panels: [],
      });
    }
    panels.push(panelJson(p.panel, id++, { x: p.x, y: p.y, w: p.w, h: p.h }));
  }
  return {
    title: spec.title,
    uid: spec.uid,
    description: spec.description,
    schemaVersion: 39,
    version: 1,
    editable: true,
    time: { from: "now-6h", to: "now" },
    refresh: "1m",
    tags: spec.tags,
    templating: {
      list: [
        { name: "datasource", type: "datasource", query: "prometheus", label: "Data source" },
        ...spec.variables.map((v) => ({
          name: v.name,
          label: v.label,
          type: "query",
          datasource: DATASOURCE,
          query: v.query,
          refresh: 2,
          includeAll: v.includeAll ?? true,
          multi: true,
          ...(v.includeAll === false ? {} : { allValue: ".*", current: { text: "All", value: "$__all" } }),
        })),
      ],
    },
    panels,
  };
}
