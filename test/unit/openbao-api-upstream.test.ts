import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import * as apis from "../../src/apis/index.js";
import {
  crdFor,
  DURATION_PATTERN,
  type JSONSchemaProps,
  QUANTITY_PATTERN,
  SEMVER_PATTERN,
} from "../../src/apis/index.js";

// Holds the generated OpenBaoCluster and OpenBaoRestore CRDs to the upstream openbao-operator's field
// list (test/fixtures/openbao/upstream-fields.txt): every upstream path must exist here with the same
// type, enum values, defaults, formats, bounds, patterns, required-ness and CEL rules, so a manifest
// written for upstream applies unchanged. Our extra fields are fine; stricter checks on an upstream
// path are allowed only where listed below with the reason.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const fixtures = join(repoRoot, "test", "fixtures", "openbao");

interface UpstreamField {
  kind: string;
  path: string;
  type: string;
  enum?: string[];
  default?: string;
  format?: string;
  pattern?: string;
  bounds: Partial<Record<Bound, number>>;
  required: boolean;
  cel?: string;
}

const BOUNDS = ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"] as const;
type Bound = (typeof BOUNDS)[number];

/** Parses the fixture; an attribute the parser does not know stops the test instead of being skipped. */
function parseUpstreamFields(text: string): UpstreamField[] {
  const out: UpstreamField[] = [];
  let kind = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("kind ")) {
      kind = line.slice(5).trim();
      continue;
    }
    const colon = line.indexOf(": ");
    const path = line.slice(0, colon);
    let rest = line.slice(colon + 2);
    let cel: string | undefined;
    const celAt = rest.indexOf("cel:");
    if (celAt >= 0) {
      cel = rest.slice(celAt + 4);
      rest = rest.slice(0, celAt);
    }
    const parts = rest
      .split(", ")
      .map((p) => p.trim().replace(/,$/, ""))
      .filter((p) => p !== "");
    const field: UpstreamField = { kind, path, type: parts[0]!, bounds: {}, required: false };
    if (cel !== undefined) field.cel = cel;
    for (const p of parts.slice(1)) {
      if (p === "REQUIRED") {
        field.required = true;
        continue;
      }
      const eq = p.indexOf("=");
      const key = p.slice(0, eq);
      const value = p.slice(eq + 1);
      if (key === "enum") field.enum = value.split("|");
      else if (key === "default") field.default = value;
      else if (key === "format") field.format = value;
      else if (key === "pattern") field.pattern = value;
      else if ((BOUNDS as readonly string[]).includes(key)) field.bounds[key as Bound] = Number(value);
      else throw new Error(`${kind} ${path}: unknown attribute ${p}`);
    }
    out.push(field);
  }
  return out;
}

/** Splits `spec.audit[].fileOptions` into `spec`, `audit`, `[]`, `fileOptions`. */
const segments = (path: string): string[] => path.match(/[^.[\]{}]+|\[\]|\{\}/g) ?? [];

interface Resolved {
  node: JSONSchemaProps;
  required: boolean;
}

/** Finds a path in a structural schema; undefined when it is missing or hidden under a free-form node. */
function resolve(root: JSONSchemaProps, path: string): Resolved | undefined {
  let node = root;
  let required = false;
  for (const seg of segments(path)) {
    if (node["x-kubernetes-preserve-unknown-fields"] && !node.properties) return undefined;
    if (seg === "[]") {
      if (!node.items) return undefined;
      node = node.items;
      required = false;
    } else if (seg === "{}") {
      if (!node.additionalProperties) return undefined;
      node = node.additionalProperties;
      required = false;
    } else {
      const child = node.properties?.[seg];
      if (!child) return undefined;
      required = node.required?.includes(seg) ?? false;
      node = child;
    }
  }
  return { node, required };
}

/** The fixture writes defaults as text; read them the way the schema's type reads them. */
function upstreamDefault(field: UpstreamField): unknown {
  const v = field.default!;
  if (field.type === "boolean") return v === "true";
  if (field.type === "integer") return Number(v);
  if (v === "''") return "";
  return v;
}

function typeProblem(field: UpstreamField, node: JSONSchemaProps): string | undefined {
  switch (field.type) {
    case "free-form":
      // Upstream's free-form values hold any JSON; ours keep unknown fields (objects are what the
      // manifests put there) and `validate` says when one is not an object.
      return node["x-kubernetes-preserve-unknown-fields"] === true && (!node.type || node.type === "object")
        ? undefined
        : "is not free-form";
    case "int-or-string":
      return node["x-kubernetes-int-or-string"] === true ? undefined : "is not int-or-string";
    default:
      return node.type === field.type ? undefined : `has type ${String(node.type)}, upstream ${field.type}`;
  }
}

/**
 * Where this schema is deliberately stricter than upstream, or has a default upstream lacks, on an
 * upstream path. The key is `<kind> <path> <what>`; the value says why it is safe for upstream
 * manifests.
 */
const ALLOWED: Record<string, string> = {
  "OpenBaoCluster spec.tls optional":
    "defaulted to {} (then OperatorManaged, enabled, 720h), so a manifest without it gets upstream's usual TLS",
  "OpenBaoCluster spec.tls.enabled optional": "defaulted to true, the value upstream manifests set",
  "OpenBaoCluster spec.tls.rotationPeriod default":
    "upstream's CEL rule makes it required for OperatorManaged; the default only fills what it would refuse",
  "OpenBaoCluster spec cel":
    "upstream's rule requires tls.rotationPeriod in OperatorManaged mode; here it is defaulted, so the rule could never fail",
  "OpenBaoCluster spec.replicas maximum":
    "upstream has no maximum (replicas: 100 made 100 pods); none of its samples or docs asks for more than 9 voters, and Raft gains nothing from more",
  "OpenBaoCluster spec.unseal.kmip.address optional":
    "upstream 0.5 renamed it endpoint; either form is accepted, and a CEL rule requires address or the 0.5 set (endpoint, kmsKeyID, clientCert, clientKey)",
  "OpenBaoRestore spec required":
    "a restore without spec names no cluster and no snapshot; upstream's controller fails it, this schema refuses it",
};

/**
 * Patterns this schema puts on strings upstream leaves free: each refuses only values upstream's
 * controllers refuse later anyway (a version that is not semver, a size that is not a quantity, a
 * duration Go cannot parse), so the error comes at apply time and names the field.
 */
const ALLOWED_PATTERNS = new Set([DURATION_PATTERN, QUANTITY_PATTERN, SEMVER_PATTERN]);

function differences(field: UpstreamField, root: JSONSchemaProps): string[] {
  const at = `${field.kind} ${field.path}`;
  const found = resolve(root, field.path);
  if (!found) return [`${at}: missing`];
  const { node, required } = found;
  const out: string[] = [];
  const allowed = (what: string) => ALLOWED[`${at} ${what}`] !== undefined;
  const inStatus = field.path.startsWith("status.");
  const problem = typeProblem(field, node);
  if (problem) out.push(`${at}: ${problem}`);
  for (const v of field.enum ?? [])
    if (!node.enum?.includes(v)) out.push(`${at}: enum lacks upstream value ${v}`);
  if (field.enum && !node.enum) out.push(`${at}: no enum`);
  if (field.default !== undefined) {
    if (!isDeepStrictEqual(node.default, upstreamDefault(field)))
      out.push(
        `${at}: default ${JSON.stringify(node.default)}, upstream ${JSON.stringify(upstreamDefault(field))}`,
      );
  } else if (node.default !== undefined && !field.required && !allowed("default")) {
    out.push(`${at}: default ${JSON.stringify(node.default)} where upstream has none`);
  }
  if (field.format !== undefined && node.format !== field.format)
    out.push(`${at}: format ${String(node.format)}, upstream ${field.format}`);
  if (field.pattern !== undefined && node.pattern !== field.pattern)
    out.push(`${at}: pattern ${String(node.pattern)}, upstream ${field.pattern}`);
  if (field.pattern === undefined && node.pattern !== undefined && !ALLOWED_PATTERNS.has(node.pattern))
    out.push(`${at}: pattern ${node.pattern} where upstream has none`);
  for (const b of BOUNDS) {
    const theirs = field.bounds[b];
    const ours = node[b];
    if (theirs !== undefined && ours !== theirs) out.push(`${at}: ${b} ${String(ours)}, upstream ${theirs}`);
    // Upper bounds on lengths and list sizes are needed by the API server to cost CEL rules and are
    // kept generous; any other bound upstream lacks would refuse what upstream accepts.
    // Status is written by this operator alone, so a stricter bound there refuses nothing of a user's.
    if (
      theirs === undefined &&
      ours !== undefined &&
      b !== "maxLength" &&
      b !== "maxItems" &&
      !inStatus &&
      !allowed(b)
    )
      out.push(`${at}: ${b} ${ours} where upstream has none`);
  }
  // Looser than upstream is fine when our default fills the field (the API server defaults before it
  // checks required fields, so upstream's marker never fires either); status is ours to write.
  const sameDefault = field.default !== undefined && isDeepStrictEqual(node.default, upstreamDefault(field));
  if (field.required && !required && !sameDefault && !inStatus && !allowed("optional"))
    out.push(`${at}: optional, upstream required`);
  if (!field.required && required && node.default === undefined && !allowed("required"))
    out.push(`${at}: required without a default, upstream optional`);
  if (field.cel !== undefined && !allowed("cel")) {
    const rules = (node["x-kubernetes-validations"] ?? []).map((r) => r["rule"]);
    if (!rules.includes(field.cel)) out.push(`${at}: lacks upstream's CEL rule ${field.cel}`);
  }
  return out;
}

const fields = parseUpstreamFields(readFileSync(join(fixtures, "upstream-fields.txt"), "utf8"));
const schemaOf = (kind: string) => crdFor(kind).spec.versions[0]!.schema.openAPIV3Schema;

describe("OpenBao CRDs against the upstream field list", () => {
  it("reads the whole fixture", () => {
    assert.ok(fields.filter((f) => f.kind === "OpenBaoCluster").length > 500);
    assert.ok(fields.filter((f) => f.kind === "OpenBaoRestore").length > 40);
  });

  for (const kind of ["OpenBaoCluster", "OpenBaoRestore"]) {
    it(`${kind}: has every upstream path with upstream's type, enum, default, bounds and rules`, () => {
      const root = schemaOf(kind);
      const problems = fields.filter((f) => f.kind === kind).flatMap((f) => differences(f, root));
      assert.deepEqual(problems, []);
    });
  }

  it("marks unseal.type and selfInit.enabled exactly as upstream does", () => {
    // unseal.type: optional, defaulted to static; selfInit.enabled: required, defaulted to false.
    const unseal = resolve(schemaOf("OpenBaoCluster"), "spec.unseal.type")!;
    assert.equal(unseal.required, false);
    assert.equal(unseal.node.default, "static");
    const enabled = resolve(schemaOf("OpenBaoCluster"), "spec.selfInit.enabled")!;
    assert.equal(enabled.required, true);
    assert.equal(enabled.node.default, false);
  });

  it("lists only allowances that are still needed", () => {
    // An allowance for a path that no longer differs would hide a later, unintended difference.
    const unused = Object.keys(ALLOWED).filter((key) => {
      const [kind, path, what] = key.split(" ") as [string, string, string];
      const field = fields.find((f) => f.kind === kind && f.path === path);
      const node = field && resolve(schemaOf(kind), path);
      if (!field || !node) return true;
      if (what === "default") return node.node.default === undefined;
      if (what === "optional") return node.required;
      if (what === "required") return !node.required;
      if (what === "cel")
        return (node.node["x-kubernetes-validations"] ?? []).some((r) => r["rule"] === field.cel);
      return node.node[what as Bound] === undefined;
    });
    assert.deepEqual(unused, []);
  });

  it("fails for a missing path, another type, a lost enum value, default or bound", () => {
    // The checker itself must be able to fail: a hand-made schema that differs in each way.
    const root: JSONSchemaProps = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            size: { type: "integer" },
            mode: { type: "string", enum: ["a"] },
            region: { type: "string", default: "eu" },
            count: { type: "integer", minimum: 2 },
            free: { type: "object", properties: { x: { type: "string" } } },
          },
          required: ["mode"],
        },
      },
    };
    const probe = parseUpstreamFields(
      [
        "kind T",
        "spec.absent: string",
        "spec.size: string",
        "spec.mode: string, enum=a|b",
        "spec.region: string, default=us-east-1",
        "spec.count: integer, minimum=1, REQUIRED",
        "spec.free: free-form",
        "spec: object, cel:self.x == 1",
      ].join("\n"),
    );
    const found = probe.flatMap((f) => differences(f, root));
    assert.deepEqual(found, [
      "T spec.absent: missing",
      "T spec.size: has type integer, upstream string",
      "T spec.mode: enum lacks upstream value b",
      "T spec.mode: required without a default, upstream optional",
      'T spec.region: default "eu", upstream "us-east-1"',
      "T spec.count: minimum 2, upstream 1",
      "T spec.count: optional, upstream required",
      "T spec.free: is not free-form",
      "T spec: lacks upstream's CEL rule self.x == 1",
    ]);
  });
});

describe("OpenBao names against upstream's", () => {
  const sections = new Map<string, string[]>();
  let current = "";
  for (const raw of readFileSync(join(fixtures, "upstream-names.txt"), "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = header[1]!;
      sections.set(current, []);
    } else sections.get(current)!.push(line);
  }
  const values = (o: object) => new Set(Object.values(o) as string[]);
  const missing = (names: string[], exported: Set<string>) => names.filter((n) => !exported.has(n));

  it("exports every upstream condition type of OpenBaoCluster and OpenBaoRestore", () => {
    assert.deepEqual(missing(sections.get("conditions")!, values(apis.OpenBaoClusterCondition)), []);
    assert.deepEqual(missing(sections.get("restore-conditions")!, values(apis.OpenBaoRestoreCondition)), []);
  });
  it("exports every upstream reason", () => {
    const exported = new Set([...values(apis.OpenBaoClusterReason), ...values(apis.OpenBaoRestoreReason)]);
    // Upstream's constants its conditions never show: Upgrading says InProgress and Idle there, and
    // so it does here (docs/openbaocluster.md, "Reasons").
    const notShown = ["NoUpgradeNeeded", "UpgradeInProgress"];
    assert.deepEqual(missing(sections.get("reasons")!, exported), notShown);
  });
  it("exports every upstream annotation, label and finalizer", () => {
    assert.deepEqual(missing(sections.get("annotations")!, values(apis.OpenBaoAnnotation)), []);
    assert.deepEqual(missing(sections.get("finalizers")!, values(apis.OpenBaoFinalizer)), []);
  });
  it("exports every upstream metric name", () => {
    assert.deepEqual(missing(sections.get("metrics")!, values(apis.OpenBaoMetric)), []);
  });
});
