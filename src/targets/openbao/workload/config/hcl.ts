/**
 * A small writer for the HCL (version 1) dialect OpenBao reads its configuration in. Every string a
 * user can influence — attribute values, block labels, map keys that are not plain identifiers —
 * goes through `quote`, so nothing in a value can end a string, open a block or add an attribute.
 * Pure; no I/O.
 */
import { ConfigError } from "./errors.js";

export type HclValue = string | number | boolean | readonly HclValue[] | HclObject;
export interface HclObject {
  readonly [key: string]: HclValue | undefined;
}

export interface HclAttribute {
  kind: "attribute";
  key: string;
  value: HclValue;
  /** Where the value comes from in the spec, for error messages; the key when unset. */
  field?: string;
}
export interface HclBlock {
  kind: "block";
  type: string;
  labels: string[];
  body: HclNode[];
}
export type HclNode = HclAttribute | HclBlock;

/** Keys the operator itself writes, and user keys that may stay bare. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function isIdentifier(key: string): boolean {
  return IDENTIFIER.test(key);
}

/**
 * A double-quoted HCL string holding exactly `text`. Only printable ASCII other than the quote, the
 * backslash and the template sigils `$` and `%` is written as is; everything else becomes a \u or
 * \U escape. Without a bare `$`, HCL's scanner never enters a `${...}` interpolation (inside which
 * a quote would not end the string and escapes are not decoded), and without a raw newline the
 * value cannot reach the next line. Braces alone mean nothing inside an HCL 1 string.
 */
export function quote(text: string, field: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x20 && unit <= 0x7e && !SPECIAL.has(unit)) {
      out += text[i];
      continue;
    }
    const short = SHORT_ESCAPES[unit];
    if (short !== undefined) {
      out += short;
      continue;
    }
    let point = unit;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = text.charCodeAt(i + 1);
      if (!(low >= 0xdc00 && low <= 0xdfff)) throw lonelySurrogate(field);
      point = (unit - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      throw lonelySurrogate(field);
    }
    out += point > 0xffff ? `\\U${hex(point, 8)}` : `\\u${hex(point, 4)}`;
  }
  return `${out}"`;
}

// " $ % \
const SPECIAL = new Set([0x22, 0x24, 0x25, 0x5c]);
// The escapes HCL decodes that keep common text readable; the rest use \u.
const SHORT_ESCAPES: Record<number, string> = { 34: '\\"', 92: "\\\\", 10: "\\n", 9: "\\t", 13: "\\r" };

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

function lonelySurrogate(field: string): ConfigError {
  return new ConfigError(field, "contains a lone UTF-16 surrogate, which is not text");
}

/** A map key: bare when it is an identifier, quoted otherwise (HCL accepts string keys). */
export function key(name: string, field: string): string {
  return isIdentifier(name) ? name : quote(name, field);
}

function number(value: number, field: string): string {
  // JSON numbers beyond 2^53 or in exponent form would not survive the trip unchanged.
  if (!Number.isFinite(value)) throw new ConfigError(field, `${value} is not a finite number`);
  const text = String(value);
  if (!/^-?[0-9]+(\.[0-9]+)?$/.test(text) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
    throw new ConfigError(field, `${text} cannot be written exactly; give it as a string`);
  return text;
}

function scalarOrNested(value: HclValue, field: string, indent: string): string {
  switch (typeof value) {
    case "string":
      return quote(value, field);
    case "number":
      return number(value, field);
    case "boolean":
      return value ? "true" : "false";
  }
  if (Array.isArray(value)) {
    const list = value as readonly HclValue[];
    if (list.length === 0) return "[]";
    const inner = indent + "  ";
    const items = list.map((v, i) => `${inner}${scalarOrNested(v, `${field}[${i}]`, inner)},`);
    return `[\n${items.join("\n")}\n${indent}]`;
  }
  if (value === null || typeof value !== "object")
    throw new ConfigError(field, `${value === null ? "null" : typeof value} values cannot be rendered`);
  const entries = Object.entries(value as HclObject).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return "{}";
  const inner = indent + "  ";
  const lines = entries.map(
    ([k, v]) => `${inner}${key(k, `${field}.${k}`)} = ${scalarOrNested(v!, `${field}.${k}`, inner)}`,
  );
  return `{\n${lines.join("\n")}\n${indent}}`;
}

/** Renders nodes at `indent`; `field` names the place in the spec for error messages. */
export function renderNodes(nodes: HclNode[], indent = ""): string {
  const out: string[] = [];
  for (const node of nodes) {
    if (node.kind === "attribute") {
      const field = node.field ?? node.key;
      out.push(`${indent}${key(node.key, field)} = ${scalarOrNested(node.value, field, indent)}`);
      continue;
    }
    if (!isIdentifier(node.type)) throw new ConfigError(node.type, "is not a valid block type");
    const labels = node.labels.map((l) => ` ${quote(l, `${node.type} label`)}`).join("");
    if (node.body.length === 0) {
      out.push(`${indent}${node.type}${labels} {}`);
      continue;
    }
    out.push(`${indent}${node.type}${labels} {`, renderNodes(node.body, `${indent}  `), `${indent}}`);
  }
  return out.join("\n");
}

/**
 * Attributes from a map, dropping unset values so optional settings need no `if` at each call site.
 * `field` prefixes the keys in error messages.
 */
export function attrs(values: Record<string, HclValue | undefined>, field?: string): HclAttribute[] {
  const out: HclAttribute[] = [];
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    out.push({ kind: "attribute", key: k, value: v, field: field === undefined ? k : `${field}.${k}` });
  }
  return out;
}

export function block(type: string, labels: string[], body: HclNode[]): HclBlock {
  return { kind: "block", type, labels, body };
}
