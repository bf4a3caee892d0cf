// Reading PromQL just far enough to check dashboards and alerts against the metrics the operator
// registers: which metric names an expression reads, and which labels it matches on each.

const PROMQL_WORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "le", "job"]);

/**
 * The metric names a PromQL expression reads: label matchers, strings, ranges and grouping clauses
 * are dropped, then what is left that is neither a function call, a keyword nor a number.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const names = new Set<string>();
  for (const m of bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?/g)) {
    const name = m[1] ?? "";
    if (m[2] || PROMQL_WORDS.has(name)) continue;
    names.add(name);
  }
  return [...names];
}

/** Each `metric{matchers}` of an expression with the label names its matchers use. */
export function selectorLabels(expr: string): { metric: string; labels: string[] }[] {
  const found: { metric: string; labels: string[] }[] = [];
  for (const m of expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)) {
    const labels = [...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map(
      (l) => l[1] ?? "",
    );
    found.push({ metric: m[1] ?? "", labels });
  }
  return found;
}

/** A histogram's series (`_bucket`, `_sum`, `_count`) belong to the histogram's name. */
export const baseMetric = (name: string): string => name.replace(/_(bucket|sum|count)$/, "");
