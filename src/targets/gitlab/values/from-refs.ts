// spec.chart.valuesFrom read into values layers. Pure: the caller looks the objects up (the
// reconciler in its label-selected informers, so an unlabelled object is simply not found) and
// hands over their data, Secrets' already decoded. Content is never echoed: a Secret's values may
// be passwords, and a ConfigMap's are no one's business in a condition either.
import { parse } from "yaml";
import type { GitLabCoreSpec } from "../../../apis/gitlabcore.js";
import {
  DefaultValuesKey,
  GitLabConfigSourceLabel,
  GitLabCoreReason,
} from "../../../apis/gitlabcore-names.js";
import { isMap, type Values } from "./merge.js";

export interface ValuesFromLayer {
  values: Values;
  /** Where a conflict is fixed: `spec.chart.valuesFrom[1]`. */
  field: string;
  /** `Secret gitlab-smtp` */
  source: string;
}

/** The data of a labelled ConfigMap or Secret (decoded), or undefined when there is none. */
export type ValuesSourceLookup = (
  kind: "ConfigMap" | "Secret",
  name: string,
) => Record<string, string> | undefined;

export type ValuesFromRead =
  | { ok: true; layers: ValuesFromLayer[] }
  | {
      ok: false;
      reason:
        | typeof GitLabCoreReason.ValuesReferenceNotFound
        | typeof GitLabCoreReason.ValuesReferenceInvalid;
      message: string;
    };

/** Reads every entry in order; the first one that is missing (and not optional) or not a map ends it. */
export function readValuesFrom(spec: GitLabCoreSpec, lookup: ValuesSourceLookup): ValuesFromRead {
  const layers: ValuesFromLayer[] = [];
  for (const [i, ref] of (spec.chart?.valuesFrom ?? []).entries()) {
    const field = `spec.chart.valuesFrom[${i}]`;
    const source = `${ref.kind} ${ref.name}`;
    const key = ref.valuesKey ?? DefaultValuesKey;
    const data = lookup(ref.kind, ref.name);
    const text = data?.[key];
    if (text === undefined) {
      if (ref.optional) continue;
      return {
        ok: false,
        reason: GitLabCoreReason.ValuesReferenceNotFound,
        message: data
          ? `${field}: ${source} has no key ${key}`
          : `${field}: ${source} not found in this namespace, or not labelled ${GitLabConfigSourceLabel}: "true"`,
      };
    }
    const invalid = (what: string): ValuesFromRead => ({
      ok: false,
      reason: GitLabCoreReason.ValuesReferenceInvalid,
      message: `${field}: ${source} key ${key} ${what}`,
    });
    let doc: unknown;
    try {
      // The parser's own messages quote the text: only that it failed is reported.
      doc = parse(text, { maxAliasCount: 100, uniqueKeys: true });
    } catch {
      return invalid("is not valid YAML");
    }
    if (doc === null || doc === undefined) continue; // empty or null: adds nothing
    if (!isMap(doc))
      return invalid(`holds ${Array.isArray(doc) ? "a list" : `a ${typeof doc}`}, not a map of chart values`);
    layers.push({ values: doc, field, source });
  }
  return { ok: true, layers };
}
