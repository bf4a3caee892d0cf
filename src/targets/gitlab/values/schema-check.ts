// Effective values against a chart's values.schema.json, the check Helm makes at render, made offline
// so a bad resource is caught before it reaches a cluster. As Helm does, the chart's own values.yaml is
// coalesced under the supplied values first (a null drops a default), then the whole is checked.
// Each problem names the field a user would change: the free-form value, or the structured field a
// derived value comes from. Values are never echoed, only paths and the schema's constraint.
import AjvDraft7, { type ErrorObject, type ValidateFunction } from "ajv";
import Ajv2019Module from "ajv/dist/2019.js";
import Ajv2020Module from "ajv/dist/2020.js";
import type { ChartFiles } from "./chart-files.js";
import { derivedSource } from "./derived.js";
import { isMap, setOwn, type Values, type ValuesError, valueAt } from "./merge.js";

export interface ValueLayers {
  derived: Values;
  chart: Values;
  overrides: Values;
}

/** Helm's coalescing: `over` wins; maps merge; a null in `over` removes the key. */
export function coalesce(defaults: Values, over: Values): Values {
  const out: Values = {};
  for (const k of Object.keys(defaults)) setOwn(out, k, defaults[k]);
  for (const k of Object.keys(over)) {
    const v = over[k];
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) setOwn(out, k, coalesce(out[k] as Values, v));
    else setOwn(out, k, v);
  }
  return out;
}

// Ajv is CommonJS: under NodeNext its default import is module.exports, whose `default` is the class.
const Ajv = AjvDraft7.default;
const Ajv2019 = Ajv2019Module.default;
const Ajv2020 = Ajv2020Module.default;

// Compiled validators by schema text: `validate` over a folder checks many objects against few charts.
const compiled = new Map<string, ValidateFunction | Error>();

function compile(schema: unknown): ValidateFunction | Error {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  if (hit) return hit;
  const dialect = isMap(schema) && typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  // Charts declare draft-07 mostly; 2019-09 and 2020-12 need their own vocabularies. Formats are not
  // checked (no format vocabulary is loaded), and unknown keywords are tolerated, as Helm does.
  const options = { allErrors: true, strict: false, validateFormats: false } as const;
  const ajv = dialect.includes("2020-12")
    ? new Ajv2020(options)
    : dialect.includes("2019-09")
      ? new Ajv2019(options)
      : new Ajv(options);
  let result: ValidateFunction | Error;
  try {
    const copy = isMap(schema) ? { ...schema } : schema;
    // draft-04/06 identifiers are not known to Ajv; their keywords read the same as draft-07's.
    if (isMap(copy) && !/2019-09|2020-12/.test(dialect)) delete copy["$schema"];
    result = ajv.compile(copy as object);
  } catch (e) {
    result = new Error(`values.schema.json does not compile: ${(e as Error).message}`);
  }
  if (compiled.size > 32) compiled.clear();
  compiled.set(key, result);
  return result;
}

const decodePointer = (pointer: string): string[] =>
  pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));

/** The field a user changes for the value at `path` (dotted), by the layer that supplied it. */
function fieldFor(path: string[], layers: ValueLayers, checked: Values): { field: string; from: string } {
  const dotted = path.join(".");
  const has = (values: Values) => path.length > 0 && valueAt(values, dotted) !== undefined;
  if (path.length > 0 && has(layers.overrides))
    return { field: `values.${dotted}`, from: "an operator override" };
  if (has(layers.chart)) return { field: `spec.chart.values.${dotted}`, from: "" };
  if (has(layers.derived)) {
    const source = derivedSource(dotted);
    const m = / from (spec\.[\w.]+)$/.exec(source);
    return { field: m ? m[1]! : `spec.chart.values.${dotted}`, from: `derived value ${dotted}` };
  }
  return {
    field: path.length ? `spec.chart.values.${dotted}` : "spec.chart.values",
    from: path.length && valueAt(checked, dotted) !== undefined ? "the chart's default" : "",
  };
}

function describe(e: ErrorObject): { path: string[]; message: string } {
  const path = decodePointer(e.instancePath);
  const params = e.params as Record<string, unknown>;
  if (e.keyword === "required" && typeof params["missingProperty"] === "string")
    return { path: [...path, params["missingProperty"]], message: "is required" };
  if (e.keyword === "additionalProperties" && typeof params["additionalProperty"] === "string")
    return { path: [...path, params["additionalProperty"]], message: "is not allowed by the chart" };
  if (e.keyword === "enum" && Array.isArray(params["allowedValues"]))
    return {
      path,
      message: `must be one of: ${(params["allowedValues"] as unknown[])
        .slice(0, 10)
        .map((v) => JSON.stringify(v))
        .join(", ")}`,
    };
  return { path, message: e.message ?? `fails ${e.keyword}` };
}

/** Problems of the effective values against the chart's schema; empty when it has none or they pass. */
export function checkAgainstChartSchema(
  chart: ChartFiles,
  values: Values,
  layers: ValueLayers,
): ValuesError[] {
  if (chart.schema === undefined) return [];
  const validate = compile(chart.schema);
  const chartName = `values.schema.json of chart ${chart.version}`;
  if (validate instanceof Error)
    return [{ field: "spec.version", message: `${chartName}: ${validate.message}` }];
  const checked = coalesce(chart.defaults, values);
  if (validate(checked)) return [];
  const out: ValuesError[] = [];
  const seen = new Set<string>();
  for (const e of validate.errors ?? []) {
    const { path, message } = describe(e);
    const { field, from } = fieldFor(path, layers, checked);
    // The path is said only when the field does not already end with it (a derived value's field).
    const subject = !path.length ? "values " : field.endsWith(path.join(".")) ? "" : `${path.join(".")} `;
    const text = `${subject}${message} (${chartName}${from ? `; ${from}` : ""})`;
    const key = `${field}\u0000${text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message: text });
    if (out.length >= 20) break;
  }
  return out;
}
