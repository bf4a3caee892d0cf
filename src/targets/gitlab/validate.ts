// Offline checks of GitLabCore manifests, before anything reaches a cluster: the definition's schema
// (types, bounds, patterns, unknown fields as a Strict apply would refuse them), its union rules (the
// CEL twins in apis/gitlabcore.ts), the effective values (the same function the reconciler renders
// with), and, given a charts directory, those values against the chart's values.schema.json, which
// upstream only finds out at render. Across objects: one name or one hostname used twice.
import type { TSchema } from "@sinclair/typebox";
import {
  ClickHouseUrlMessage,
  CustomCAOneSourceMessage,
  clickHouseUrlHolds,
  type GitLabCore,
  GitLabCoreGroup,
  GitLabCoreKind,
  GitLabCoreSchema,
  GitLabCoreVersion,
  NetworkingModes,
  NetworkingOneModeMessage,
  SpecRules,
  VersionUnionRules,
} from "../../apis/gitlabcore.js";
import { schemaErrors } from "../../apis/validate.js";
import type { ManifestDocument, ManifestProblem } from "../../runtime/target.js";
import { chartVersionsIn, readChart } from "./values/chart-files.js";
import { effectiveValues } from "./values/index.js";
import { isMap } from "./values/merge.js";
import { checkAgainstChartSchema } from "./values/schema-check.js";
import { resolveTargetVersion, versionSpecOf } from "./version/resolve.js";
import { canonical, lessThan } from "./version/versions.js";

export interface GitLabValidateOptions {
  /** A charts directory in the operator's layout (HELM_CHARTS): enables the chart schema check. */
  chartsDir?: string | undefined;
  /** The operator's ServiceAccount, as the reconciler would derive values with it. */
  managerServiceAccount?: string | undefined;
  /** The deployed chart version (status.version): a version below it is a refused downgrade. */
  deployed?: string | undefined;
  /**
   * The chart the version resolves to is not in the charts directory: an error offline (the
   * directory is all there is), a warning at admission (the reconciler may still pull it).
   */
  missingChart?: "error" | "warning";
}

export interface FieldProblem {
  field?: string;
  message: string;
  severity?: "warning";
}

export const isGitLabCoreDocument = (doc: unknown): boolean =>
  isMap(doc) &&
  doc["kind"] === GitLabCoreKind &&
  typeof doc["apiVersion"] === "string" &&
  doc["apiVersion"].startsWith(`${GitLabCoreGroup}/`);

/** Every problem of one GitLabCore object; empty when it would apply and render. */
export function validateGitLabCore(doc: unknown, options: GitLabValidateOptions = {}): FieldProblem[] {
  if (!isMap(doc)) return [{ message: "is not an object" }];
  const apiVersion = `${GitLabCoreGroup}/${GitLabCoreVersion}`;
  if (doc["apiVersion"] !== apiVersion)
    return [
      { field: "apiVersion", message: `must be ${apiVersion} (this operator serves no other version)` },
    ];

  const problems: FieldProblem[] = [];
  for (const e of schemaErrors(GitLabCoreSchema, doc))
    problems.push({ field: e.path || undefined, message: e.message } as FieldProblem);
  if (isMap(doc["spec"]))
    problems.push(...unknownFields(GitLabCoreSchema.properties.spec, doc["spec"], "spec"));
  const spec = isMap(doc["spec"]) ? doc["spec"] : undefined;
  if (spec && isMap(spec["version"])) {
    for (const r of VersionUnionRules)
      if (!r.holds(spec["version"])) problems.push({ field: "spec.version", message: r.message });
  }
  if (spec && isMap(spec["networking"])) {
    const net = spec["networking"];
    if (NetworkingModes.filter((m) => net[m] !== undefined).length > 1)
      problems.push({ field: "spec.networking", message: NetworkingOneModeMessage });
  }
  if (spec) problems.push(...newerFieldRules(spec));
  // The values need a well-formed spec: a type error above would only echo here as a crash or noise.
  if (problems.length > 0) return dedupe(problems);
  return valuesProblems(doc as unknown as GitLabCore, options);
}

/** The CEL rules of the newer fields (spec.domain, customCAs, clickhouse), as the API server applies them. */
function newerFieldRules(spec: Record<string, unknown>): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const r of SpecRules) if (!r.holds(spec)) out.push({ field: r.field, message: r.message });
  const certs = spec["certificates"];
  const cas = isMap(certs) ? certs["customCAs"] : undefined;
  if (Array.isArray(cas))
    cas.forEach((ca, i) => {
      if (isMap(ca) && (ca["secret"] !== undefined) === (ca["configMap"] !== undefined))
        out.push({ field: `spec.certificates.customCAs[${i}]`, message: CustomCAOneSourceMessage });
    });
  const ch = spec["clickhouse"];
  if (isMap(ch) && typeof ch["url"] === "string" && !clickHouseUrlHolds(ch["url"]))
    out.push({ field: "spec.clickhouse.url", message: ClickHouseUrlMessage });
  return out;
}

function valuesProblems(obj: GitLabCore, options: GitLabValidateOptions): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const available = options.chartsDir ? chartVersionsIn(options.chartsDir) : [];
  let chartVersion: string | undefined;
  const v = versionSpecOf(obj.spec);
  if (v.type === "Static" && v.version !== undefined) {
    chartVersion = canonical(v.version);
    if (chartVersion && options.deployed && lessThan(chartVersion, options.deployed))
      problems.push({
        field: "spec.version.version",
        message: `${chartVersion} is below the deployed chart version ${options.deployed}; downgrades are refused`,
      });
  } else if (v.type !== "Static" && options.chartsDir) {
    const r = resolveTargetVersion({
      spec: v,
      available,
      deployed: options.deployed,
      sourceName: `the charts in ${options.chartsDir}`,
    });
    if (r.ok) chartVersion = r.version;
    else problems.push({ field: r.field, message: r.error });
  }
  // A versionRef, or a tracking type without charts, cannot be resolved offline: the values are
  // still checked, without the parts that depend on the chart version.
  const result = effectiveValues({
    name: obj.metadata.name ?? "",
    namespace: obj.metadata.namespace ?? "default",
    spec: obj.spec,
    chartVersion,
    managerServiceAccount: options.managerServiceAccount,
  });
  if (!result.ok) {
    problems.push(...result.errors);
    return problems;
  }
  if (options.chartsDir && chartVersion) {
    const chart = readChart(options.chartsDir, chartVersion);
    if (!chart.ok)
      problems.push({
        field: "spec.version",
        ...(options.missingChart === "warning"
          ? { message: `${chart.error}: the values are not checked against its schema`, severity: "warning" }
          : { message: chart.error }),
      });
    else problems.push(...checkAgainstChartSchema(chart.chart, result.values, result.layers));
  }
  return problems;
}

/**
 * Fields the definition does not declare, which a Strict apply refuses and a default one drops
 * silently. Free-form maps (x-kubernetes-preserve-unknown-fields) are not looked into.
 */
function unknownFields(schema: TSchema, value: unknown, path: string): FieldProblem[] {
  const s = schema as {
    type?: string;
    properties?: Record<string, TSchema>;
    items?: TSchema;
    "x-kubernetes-preserve-unknown-fields"?: boolean;
    additionalProperties?: unknown;
  };
  if (s["x-kubernetes-preserve-unknown-fields"]) return [];
  const out: FieldProblem[] = [];
  if (s.type === "object" && s.properties && isMap(value) && !s.additionalProperties) {
    for (const k of Object.keys(value)) {
      const sub = s.properties[k];
      if (!sub) out.push({ field: `${path}.${k}`, message: "is not a field of GitLabCore (unknown field)" });
      else out.push(...unknownFields(sub, value[k], `${path}.${k}`));
    }
  } else if (s.type === "array" && s.items && Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push(...unknownFields(s.items!, item, `${path}[${i}]`));
    });
  }
  return out;
}

function dedupe(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.field}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The `validate` command's check of every GitLabCore among the documents; others are ignored. */
export function validateGitLabCoreDocuments(
  docs: Iterable<ManifestDocument>,
  options: GitLabValidateOptions = {},
): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const seen: { place: ManifestDocument; object: string; name?: string; host?: string }[] = [];
  for (const d of docs) {
    if (!isGitLabCoreDocument(d.doc)) continue;
    const doc = d.doc as Record<string, unknown>;
    const meta = isMap(doc["metadata"]) ? doc["metadata"] : {};
    const name = typeof meta["name"] === "string" ? meta["name"] : undefined;
    const namespace = typeof meta["namespace"] === "string" ? meta["namespace"] : undefined;
    const object = name === undefined ? GitLabCoreKind : namespace ? `${namespace}/${name}` : name;
    const place = { file: d.file, document: d.document, line: d.line };
    if (name === undefined) problems.push({ ...place, object, key: "metadata.name", message: "is missing" });
    for (const p of validateGitLabCore(doc, options))
      problems.push(
        p.field
          ? {
              ...place,
              object,
              key: p.field,
              message: p.message,
              ...(p.severity ? { severity: p.severity } : {}),
            }
          : { ...place, object, ...p },
      );
    const spec = isMap(doc["spec"]) ? doc["spec"] : {};
    seen.push({
      place: d,
      object,
      ...(name === undefined ? {} : { name: `${namespace ?? ""}/${name}` }),
      ...(typeof spec["hostname"] === "string"
        ? { host: spec["hostname"] }
        : typeof spec["domain"] === "string"
          ? { host: `gitlab.${spec["domain"]}` }
          : {}),
    });
  }
  const shared = (key: "name" | "host", field: string, what: string) => {
    const groups = new Map<string, typeof seen>();
    for (const s of seen) {
      const k = s[key];
      if (k !== undefined) groups.set(k, [...(groups.get(k) ?? []), s]);
    }
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      for (const s of group) {
        const others = group
          .filter((o) => o !== s)
          .map((o) => `${o.object} (${o.place.file}${o.place.line === undefined ? "" : `:${o.place.line}`})`);
        problems.push({
          file: s.place.file,
          document: s.place.document,
          line: s.place.line,
          object: s.object,
          key: field,
          message: `${what} ${others.join(", ")}`,
        });
      }
    }
  };
  shared("name", "metadata.name", "is also the name of");
  shared("host", "spec.hostname", "is also the hostname of");
  return problems;
}
