// Deep merge of Helm values layers. Maps merge key by key; anything else (scalars, lists) in the upper
// layer replaces the lower one, as Helm does with `-f` files. A null in an upper layer is kept, so
// Helm also drops the chart's own default there (Helm's way of deleting a key).
//
// A map meeting a non-map is a conflict, not a silent replacement: either the free-form values would
// wipe out a whole derived section, or an operator override could not be placed. Such conflicts come
// back as errors naming the field; values are never echoed (free-form values may hold passwords).
// Keys are copied as own properties, so `__proto__` in user values is just a key.

export interface ValuesError {
  /** Where the user would fix it, such as `spec.chart.values.global.hosts`. */
  field: string;
  message: string;
}

export type Values = Record<string, unknown>;

/** How deep values may nest; the chart's own values stay far below, hostile input does not. */
export const MAX_DEPTH = 64;

export const isMap = (v: unknown): v is Values => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

const typeName = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "a list" : isMap(v) ? "a map" : `a ${typeof v}`;

export function setOwn(target: Values, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of a JSON-like value with own properties only; throws past MAX_DEPTH. */
export function cloneValue(v: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new DepthError();
  if (Array.isArray(v)) return v.map((x) => cloneValue(x, depth + 1));
  if (typeof v === "object" && v !== null) {
    const out: Values = {};
    for (const k of Object.keys(v)) setOwn(out, k, cloneValue((v as Values)[k], depth + 1));
    return out;
  }
  return v;
}

class DepthError extends Error {}

export interface Layer {
  /** The values of the layer. */
  values: Values;
  /**
   * Where a user fixes a conflict with this layer: `spec.chart.values` for the free-form layer, and for
   * the overrides too, since only free-form values can put a non-map where an override needs a map.
   */
  field: string;
  /** What this layer is, for messages: "the free-form values", "the operator overrides". */
  name: string;
  /** A non-map here replaces a lower map without complaint (the overrides win outright). */
  replacesMaps?: boolean;
}

/**
 * Merges `upper` over `lower` (which is not modified). `describeLower(path)` says what put a value at a
 * dotted path in the lower layers, for the conflict message.
 */
export function mergeLayer(
  lower: Values,
  upper: Layer,
  describeLower: (path: string) => string,
  errors: ValuesError[],
): Values {
  try {
    return mergeMaps(lower, upper.values, [], upper, describeLower, errors, 0);
  } catch (e) {
    if (!(e instanceof DepthError)) throw e;
    errors.push({ field: upper.field, message: `nests deeper than ${MAX_DEPTH} levels` });
    return lower;
  }
}

function mergeMaps(
  lower: Values,
  upper: Values,
  path: string[],
  layer: Layer,
  describeLower: (path: string) => string,
  errors: ValuesError[],
  depth: number,
): Values {
  if (depth > MAX_DEPTH) throw new DepthError();
  const out = cloneValue(lower, depth) as Values;
  for (const key of Object.keys(upper)) {
    const up = upper[key];
    const low = Object.hasOwn(lower, key) ? lower[key] : undefined;
    const at = [...path, key];
    const dotted = at.join(".");
    if (isMap(up) && isMap(low)) {
      setOwn(out, key, mergeMaps(low, up, at, layer, describeLower, errors, depth + 1));
    } else if (isMap(low) && up !== null && up !== undefined && !layer.replacesMaps) {
      // The user would erase a whole section the lower layers fill in.
      errors.push({
        field: `${layer.field}.${dotted}`,
        message: `must be a map, not ${typeName(up)}: ${describeLower(dotted)}`,
      });
    } else if (isMap(up) && low !== null && low !== undefined && layer.replacesMaps) {
      // An override must set keys where the free-form values put a scalar: only the user can fix it.
      // (A free-form map over a derived scalar simply wins, as free-form values do.)
      errors.push({
        field: `${layer.field}.${dotted}`,
        message: `must be a map, not ${typeName(low)}: ${layer.name} set keys under it (${describeUpper(up)})`,
      });
    } else if (up !== undefined) {
      setOwn(out, key, cloneValue(up, depth + 1));
    }
  }
  return out;
}

const describeUpper = (up: Values): string =>
  Object.keys(up)
    .slice(0, 3)
    .map((k) => JSON.stringify(k))
    .join(", ");

/** The value at a dotted path of nested maps, or undefined. */
export function valueAt(values: Values, dotted: string): unknown {
  let cur: unknown = values;
  for (const k of dotted.split(".")) {
    if (!isMap(cur) || !Object.hasOwn(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** Sets a value at a dotted path, creating maps on the way (for building derived layers). */
export function setAt(values: Values, dotted: string, value: unknown): void {
  const keys = dotted.split(".");
  let cur = values;
  for (const k of keys.slice(0, -1)) {
    const next = Object.hasOwn(cur, k) ? cur[k] : undefined;
    if (isMap(next)) cur = next;
    else {
      const made: Values = {};
      setOwn(cur, k, made);
      cur = made;
    }
  }
  setOwn(cur, keys[keys.length - 1]!, value);
}

/** Every dotted path to a non-map leaf, in key order. */
export function leafPaths(values: Values, prefix = ""): string[] {
  const out: string[] = [];
  for (const k of Object.keys(values)) {
    const path = prefix ? `${prefix}.${k}` : k;
    const v = values[k];
    if (isMap(v) && Object.keys(v).length > 0) out.push(...leafPaths(v, path));
    else out.push(path);
  }
  return out;
}
