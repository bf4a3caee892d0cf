// Whether effective values turn GitLab's ClickHouse integration on. The chart configures it from
// global.clickhouse.main, so a URL there is what counts: spec.clickhouse derives one, and chart
// values may set, change or remove it (they win), so the answer is read from the merged values.
import { isMap } from "./merge.js";

export function clickHouseEnabledIn(values: unknown): boolean {
  let at: unknown = values;
  for (const k of ["global", "clickhouse", "main"]) at = isMap(at) ? at[k] : undefined;
  return isMap(at) && typeof at["url"] === "string" && at["url"] !== "";
}
