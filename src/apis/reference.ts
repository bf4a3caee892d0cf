/**
 * The field reference of each kind, as Markdown, generated from the same CRD the API server
 * enforces: every field's path, type, bounds, default and description, so the documentation cannot
 * say something the schema does not. `platform-operator crds --reference docs/reference` writes it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CustomResourceDefinition } from "./crd.js";
import { allKinds } from "./index.js";

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI v3 schema node, read generically
type SchemaNode = Record<string, any>;

interface Row {
  path: string;
  type: string;
  rules: string[];
  description: string;
}

/** `<kind lower-case>.md` for every kind, sorted by file name. */
export function renderReferenceFiles(): { fileName: string; content: string }[] {
  return allKinds
    .map((k) => ({ fileName: `${k.kind.toLowerCase()}.md`, content: referenceFor(k.crd) }))
    .sort((a, b) => a.fileName.localeCompare(b.fileName));
}

export function writeReference(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return renderReferenceFiles().map((file) => {
    const path = join(dir, file.fileName);
    writeFileSync(path, file.content, "utf8");
    return path;
  });
}

export function referenceFor(crd: CustomResourceDefinition): string {
  const version = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0]!;
  const root = version.schema.openAPIV3Schema as SchemaNode;
  const { kind, plural, shortNames } = crd.spec.names;
  const lines = [
    `# ${kind} field reference (\`${crd.spec.group}/${version.name}\`)`,
    "",
    "<!-- Generated from the CRD by `npm run crds:write`; do not edit. -->",
    "",
    root["description"] ? `${root["description"]}` : "",
    "",
    `Scope: ${crd.spec.scope}. Plural: \`${plural}\`${shortNames?.length ? `; short names: ${shortNames.map((s) => `\`${s}\``).join(", ")}` : ""}.`,
    "",
  ];
  for (const section of ["spec", "status"]) {
    const node = root["properties"]?.[section] as SchemaNode | undefined;
    if (!node) continue;
    lines.push(`## ${section}`, "", "| field | type | rules | description |", "|---|---|---|---|");
    for (const row of rows(node, section, new Set(root["required"] ?? []).has(section))) {
      lines.push(
        `| \`${row.path}\` | ${row.type} | ${cell(row.rules.join("; "))} | ${cell(row.description)} |`,
      );
    }
    lines.push("");
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

function rows(node: SchemaNode, path: string, required: boolean): Row[] {
  const out: Row[] = [
    { path, type: typeOf(node), rules: rulesOf(node, required), description: node["description"] ?? "" },
  ];
  const requiredChildren = new Set<string>(node["required"] ?? []);
  for (const [name, child] of Object.entries((node["properties"] ?? {}) as Record<string, SchemaNode>)) {
    out.push(...rows(child, `${path}.${name}`, requiredChildren.has(name)));
  }
  const items = node["items"] as SchemaNode | undefined;
  if (items?.["properties"]) {
    const requiredItems = new Set<string>(items["required"] ?? []);
    for (const [name, child] of Object.entries(items["properties"] as Record<string, SchemaNode>)) {
      out.push(...rows(child, `${path}[].${name}`, requiredItems.has(name)));
    }
  }
  const values = node["additionalProperties"] as SchemaNode | undefined;
  if (values && typeof values === "object" && values["properties"]) {
    for (const [name, child] of Object.entries(values["properties"] as Record<string, SchemaNode>)) {
      out.push(...rows(child, `${path}{}.${name}`, false));
    }
  }
  return out;
}

function typeOf(node: SchemaNode): string {
  if (node["x-kubernetes-int-or-string"]) return "integer or string";
  const type =
    (node["type"] as string | undefined) ?? (node["x-kubernetes-preserve-unknown-fields"] ? "any" : "object");
  if (type === "array") return `array of ${typeOf(node["items"] ?? {})}`;
  if (type === "object" && node["additionalProperties"] && typeof node["additionalProperties"] === "object") {
    return `map of ${typeOf(node["additionalProperties"])}`;
  }
  return node["format"] ? `${type} (${node["format"]})` : type;
}

function rulesOf(node: SchemaNode, required: boolean): string[] {
  const rules: string[] = [];
  if (required) rules.push("required");
  if (node["enum"])
    rules.push(`one of ${(node["enum"] as unknown[]).map((v) => `\`${String(v)}\``).join(", ")}`);
  if (node["default"] !== undefined) rules.push(`default \`${JSON.stringify(node["default"])}\``);
  const bounds: [string, string][] = [
    ["minimum", "≥"],
    ["maximum", "≤"],
    ["minLength", "length ≥"],
    ["maxLength", "length ≤"],
    ["minItems", "items ≥"],
    ["maxItems", "items ≤"],
    ["minProperties", "keys ≥"],
    ["maxProperties", "keys ≤"],
  ];
  for (const [key, label] of bounds) if (node[key] !== undefined) rules.push(`${label} ${node[key]}`);
  if (node["pattern"]) rules.push(`pattern \`${node["pattern"]}\``);
  for (const v of (node["x-kubernetes-validations"] ?? []) as { message?: string; rule: string }[]) {
    rules.push(v.message ?? `\`${v.rule}\``);
  }
  return rules;
}

/**
 * Table cells hold one line; a `|` in a pattern or message must not end the cell, and a template
 * such as <random:32> must not read as an HTML tag.
 */
function cell(text: string): string {
  return text
    .replace(/\r?\n+/g, " ")
    .replace(/\|/g, "\\|")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .trim();
}
