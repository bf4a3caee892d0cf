/**
 * Turns a kind's TypeBox schema into an `apiextensions.k8s.io/v1` CustomResourceDefinition.
 *
 * The API server only accepts structural schemas: every node names its type (or says it keeps
 * unknown fields, or is int-or-string), and unions, references and `additionalProperties: false`
 * are not allowed. TypeBox can express more than that, so the conversion refuses what has no
 * structural form instead of quietly producing a definition the server would reject later.
 */
import { createHash } from "node:crypto";
import { Hint, Kind, type TObject, type TSchema } from "@sinclair/typebox";
import { stringify } from "yaml";

/** The OpenAPI v3 subset a CRD schema may use. */
export interface JSONSchemaProps {
  description?: string;
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  "x-kubernetes-embedded-resource"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: string;
  "x-kubernetes-validations"?: Record<string, unknown>[];
}

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** Everything the generator needs to know about one kind. */
export interface KindDefinition {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular?: string;
  listKind?: string;
  scope: "Namespaced" | "Cluster";
  shortNames?: string[];
  categories?: string[];
  /** The whole object: apiVersion, kind, metadata, spec and status (see `KindSchema`). */
  schema: TObject;
  printerColumns?: PrinterColumn[];
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    scope: "Namespaced" | "Cluster";
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns?: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}

/** Annotation carrying a hash of the CRD spec, so a running operator can tell an out-of-date install. */
export const SCHEMA_HASH_ANNOTATION = "platform-operator/schema-hash";
export const PART_OF_LABEL = "app.kubernetes.io/part-of";
export const PART_OF_VALUE = "platform-operator";

/** Raised when a TypeBox schema uses something that has no structural OpenAPI form. */
export class NonStructuralSchemaError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
    this.name = "NonStructuralSchemaError";
  }
}

// Keywords copied as they are; everything else TypeBox puts on a node ($id, static, patternProperties
// of records, additionalProperties: false, ...) is either translated below or dropped.
const COPIED_KEYWORDS = [
  "description",
  "format",
  "default",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "nullable",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
] as const;

// TypeBox uses JSON Schema 2019 numeric exclusive bounds; OpenAPI v3.0 wants booleans. Refusing them
// is simpler than translating and keeps one way of saying a bound.
const REFUSED_KEYWORDS = [
  "exclusiveMinimum",
  "exclusiveMaximum",
  "uniqueItems",
  "$ref",
  "allOf",
  "oneOf",
  "not",
];

// Output key order. Stable order is what makes the checked-in YAML diff cleanly.
const KEY_ORDER: (keyof JSONSchemaProps)[] = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "nullable",
  "items",
  "properties",
  "additionalProperties",
  "required",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
];

type Loose = Record<string | symbol, unknown>;

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortDeep((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

// A rule reads best with the expression first and the message after it.
const RULE_KEY_ORDER = ["rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"];
function orderedRule(rule: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of RULE_KEY_ORDER) if (rule[key] !== undefined) out[key] = rule[key];
  return out;
}

function ordered(props: JSONSchemaProps): JSONSchemaProps {
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) {
    const v = props[key];
    if (v !== undefined) out[key] = v;
  }
  return out as JSONSchemaProps;
}

function copyKeywords(schema: Loose, path: string): JSONSchemaProps {
  for (const key of REFUSED_KEYWORDS) {
    if (schema[key] !== undefined)
      throw new NonStructuralSchemaError(path, `"${key}" has no place in a CRD schema`);
  }
  const out: Record<string, unknown> = {};
  for (const key of COPIED_KEYWORDS) {
    const v = schema[key];
    if (v === undefined) continue;
    // Defaults and CEL rule objects are data, so their keys are sorted; the rest are scalars or lists.
    if (key === "default") out[key] = sortDeep(v);
    else if (key === "x-kubernetes-validations") out[key] = (v as Record<string, unknown>[]).map(orderedRule);
    else out[key] = structuredClone(v);
  }
  return out as JSONSchemaProps;
}

const preserves = (schema: Loose) => schema["x-kubernetes-preserve-unknown-fields"] === true;

function jsonTypeOf(value: unknown, path: string): JSONSchemaProps["type"] {
  switch (typeof value) {
    case "string":
      return "string";
    case "boolean":
      return "boolean";
    case "number":
      return Number.isInteger(value) ? "integer" : "number";
    default:
      throw new NonStructuralSchemaError(path, `literal of type ${typeof value} cannot be an enum value`);
  }
}

/** Converts one TypeBox node (and its children) into a structural schema node. */
export function toStructural(schema: TSchema, path = "<root>"): JSONSchemaProps {
  const s = schema as unknown as Loose;
  const out = copyKeywords(s, path);
  const kind = s[Kind] as string | undefined;

  // A recursive type cannot be spelled out; the only structural answer is to keep what arrives.
  if (s[Hint] === "Recursive") {
    if (!preserves(s)) {
      throw new NonStructuralSchemaError(path, "a recursive type needs x-kubernetes-preserve-unknown-fields");
    }
    return ordered({ ...out, type: "object" });
  }

  switch (kind) {
    case "Object": {
      const properties = (s.properties ?? {}) as Record<string, TSchema>;
      const names = Object.keys(properties).sort();
      if (names.length > 0) {
        out.properties = {};
        for (const name of names) out.properties[name] = toStructural(properties[name], `${path}.${name}`);
      }
      const required = (s.required as string[] | undefined) ?? [];
      if (required.length > 0) out.required = [...required].sort();
      const extra = s.additionalProperties;
      if (extra === true) out["x-kubernetes-preserve-unknown-fields"] = true;
      else if (extra !== undefined && extra !== false && typeof extra === "object") {
        out.additionalProperties = toStructural(extra as TSchema, `${path}.*`);
      }
      return ordered({ ...out, type: "object" });
    }
    case "Record": {
      const patterns = (s.patternProperties ?? {}) as Record<string, TSchema>;
      const values = Object.values(patterns);
      if (values.length !== 1)
        throw new NonStructuralSchemaError(path, "a record needs exactly one value type");
      const value = values[0] as unknown as Loose;
      const valueKind = value[Kind];
      if (valueKind === "Unknown" || valueKind === "Any") {
        if (!preserves(s)) {
          throw new NonStructuralSchemaError(
            path,
            "a free-form map needs x-kubernetes-preserve-unknown-fields",
          );
        }
        return ordered({ ...out, type: "object" });
      }
      out.additionalProperties = toStructural(values[0], `${path}.*`);
      return ordered({ ...out, type: "object" });
    }
    case "Array":
      out.items = toStructural(s.items as TSchema, `${path}[]`);
      return ordered({ ...out, type: "array" });
    case "String":
      return ordered({ ...out, type: "string" });
    case "Integer":
      return ordered({ ...out, type: "integer" });
    case "Number":
      return ordered({ ...out, type: "number" });
    case "Boolean":
      return ordered({ ...out, type: "boolean" });
    case "Literal":
      return ordered({ ...out, type: jsonTypeOf(s.const, path), enum: [s.const] });
    case "Union": {
      if (s["x-kubernetes-int-or-string"] === true) {
        delete out.format;
        return ordered(out);
      }
      const members = (s.anyOf ?? []) as Loose[];
      if (members.length === 0 || !members.every((m) => m[Kind] === "Literal")) {
        throw new NonStructuralSchemaError(
          path,
          "only a union of literals (an enum) or int-or-string is structural",
        );
      }
      const types = new Set(members.map((m) => jsonTypeOf(m.const, path)));
      if (types.size !== 1) throw new NonStructuralSchemaError(path, "enum values must all have one type");
      return ordered({ ...out, type: [...types][0], enum: members.map((m) => m.const) });
    }
    case "Unknown":
    case "Any":
      if (!preserves(s)) {
        throw new NonStructuralSchemaError(
          path,
          "a value of any type needs x-kubernetes-preserve-unknown-fields",
        );
      }
      return ordered(out);
    default:
      throw new NonStructuralSchemaError(path, `TypeBox kind ${String(kind)} has no structural form`);
  }
}

/**
 * Lists what keeps `props` from being structural, as the API server would see it. An empty list
 * means the schema is fine. Used by tests and worth running on anything built by hand.
 */
export function structuralProblems(props: JSONSchemaProps, path = "<root>"): string[] {
  const problems: string[] = [];
  const p = props as Loose;
  for (const key of Object.keys(p)) {
    if (!(KEY_ORDER as string[]).includes(key)) problems.push(`${path}: unexpected keyword "${key}"`);
  }
  for (const sym of Object.getOwnPropertySymbols(p)) problems.push(`${path}: carries symbol ${String(sym)}`);
  const typed =
    props.type !== undefined ||
    props["x-kubernetes-int-or-string"] === true ||
    props["x-kubernetes-preserve-unknown-fields"] === true;
  if (!typed) problems.push(`${path}: no type`);
  if (props.properties && props.additionalProperties) {
    problems.push(`${path}: properties and additionalProperties together`);
  }
  if (props.type === "array" && !props.items) problems.push(`${path}: array without items`);
  if (props.items && props.type !== "array") problems.push(`${path}: items on a non-array`);
  if ((props.properties || props.additionalProperties) && props.type !== "object") {
    problems.push(`${path}: properties on a non-object`);
  }
  for (const name of props.required ?? []) {
    if (!props.properties?.[name]) problems.push(`${path}: required "${name}" is not a property`);
  }
  if (props["x-kubernetes-list-type"] === "map") {
    const item = props.items;
    for (const key of props["x-kubernetes-list-map-keys"] ?? []) {
      const field = item?.properties?.[key];
      if (!field) problems.push(`${path}: list-map key "${key}" is not an item property`);
      else if (!item?.required?.includes(key) && field.default === undefined) {
        problems.push(`${path}: list-map key "${key}" must be required or defaulted`);
      }
    }
  }
  for (const [name, child] of Object.entries(props.properties ?? {})) {
    problems.push(...structuralProblems(child, `${path}.${name}`));
  }
  if (props.items) problems.push(...structuralProblems(props.items, `${path}[]`));
  if (props.additionalProperties)
    problems.push(...structuralProblems(props.additionalProperties, `${path}.*`));
  return problems;
}

function rootSchema(def: KindDefinition): JSONSchemaProps {
  const root = def.schema as unknown as Loose;
  const properties = root.properties as Record<string, TSchema>;
  const out: JSONSchemaProps = copyKeywords(root, def.kind);
  out.type = "object";
  // apiVersion, kind and metadata are the API server's business; they are written the way every
  // CRD writes them rather than from the narrower TypeBox literals.
  out.properties = {
    apiVersion: {
      description: "Versioned schema of this representation of the object; the server may convert it.",
      type: "string",
    },
    kind: { description: "REST resource this object represents, in CamelCase.", type: "string" },
    metadata: { type: "object" },
  };
  for (const name of Object.keys(properties).sort()) {
    if (name === "apiVersion" || name === "kind" || name === "metadata") continue;
    out.properties[name] = toStructural(properties[name], `${def.kind}.${name}`);
  }
  const required = ((root.required as string[] | undefined) ?? []).filter(
    (n) => n !== "apiVersion" && n !== "kind" && n !== "metadata",
  );
  if (required.length > 0) out.required = required.sort();
  return ordered(out);
}

export function schemaHash(spec: CustomResourceDefinition["spec"]): string {
  return createHash("sha256").update(JSON.stringify(spec)).digest("hex").slice(0, 16);
}

/** Builds the CRD for one kind, with the status subresource and one served, stored version. */
export function buildCrd(def: KindDefinition): CustomResourceDefinition {
  const names: CustomResourceDefinition["spec"]["names"] = {
    kind: def.kind,
    listKind: def.listKind ?? `${def.kind}List`,
    plural: def.plural,
    singular: def.singular ?? def.kind.toLowerCase(),
  };
  if (def.shortNames?.length) names.shortNames = [...def.shortNames];
  if (def.categories?.length) names.categories = [...def.categories];
  const columns = (def.printerColumns ?? []).map((c) => {
    const col: PrinterColumn = { name: c.name, type: c.type, jsonPath: c.jsonPath };
    if (c.description) col.description = c.description;
    if (c.format) col.format = c.format;
    if (c.priority !== undefined) col.priority = c.priority;
    return col;
  });
  const version: CustomResourceDefinition["spec"]["versions"][number] = {
    name: def.version,
    served: true,
    storage: true,
    subresources: { status: {} },
    ...(columns.length > 0 ? { additionalPrinterColumns: columns } : {}),
    schema: { openAPIV3Schema: rootSchema(def) },
  };
  const spec: CustomResourceDefinition["spec"] = {
    group: def.group,
    names,
    scope: def.scope,
    versions: [version],
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${def.plural}.${def.group}`,
      labels: { [PART_OF_LABEL]: PART_OF_VALUE },
      annotations: { [SCHEMA_HASH_ANNOTATION]: schemaHash(spec) },
    },
    spec,
  };
}

export const CRD_WRITE_COMMAND = "platform-operator crds --write deploy/crds";

/** YAML for one CRD. Same input, same bytes: keys come out in the order they were built. */
export function crdToYaml(crd: CustomResourceDefinition): string {
  const header = [
    `# Generated from src/apis by \`${CRD_WRITE_COMMAND}\`. Do not edit by hand:`,
    "# change the TypeBox schema and run the command again.",
  ].join("\n");
  const body = stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false, indent: 2 });
  return `${header}\n${body}`;
}
