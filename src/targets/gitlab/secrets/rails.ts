/**
 * The Rails `secrets.yml` of a railsSecrets generator, as the chart's shared-secrets Job writes it:
 * one document whose top-level key is the Rails environment, holding each field (a hex or
 * alphanumeric scalar, a PEM RSA key as a literal block, or a one-element list for the Active
 * Record encryption keys, so that keys can be rotated by appending). An existing document gains only
 * the fields that are absent, null or empty; every other field, environment, list and comment is
 * kept as written (edited through the YAML document, not re-serialized from values). Pure apart
 * from the injected sources.
 */
import { isMap, isScalar, isSeq, parseDocument } from "yaml";
import type { Generator } from "../../../apis/gitlabsecrets.js";
import { randomString, type Sources } from "./generate.js";

type RailsField = NonNullable<Generator["fields"]>[number];

/** A fresh value of one field. */
async function fieldValue(f: RailsField, sources: Sources): Promise<string | string[]> {
  if (f.shape === "pem") return sources.rsa(f.bits!);
  const value = randomString(sources.random, f.charset!, f.length!);
  return f.shape === "list" ? [value] : value;
}

/** Absent, null, an empty string or an empty list: a field the Job would fill. */
function isEmpty(node: unknown): boolean {
  if (node === undefined || node === null) return true;
  if (isScalar(node)) return node.value === null || node.value === "";
  if (isSeq(node)) return node.items.length === 0;
  if (isMap(node)) return node.items.length === 0;
  return false;
}

export interface RailsFill {
  /** The new text when a field was filled; absent when nothing changes. */
  text?: string;
  filled: string[];
  /** Empty fields status recorded as ready (data-bearing): reported, never regenerated. */
  lost: string[];
  /** Fields holding a value once the write is done. */
  present: string[];
  /** The document as a whole cannot be edited: left as it is; names no value. */
  report?: string;
}

/**
 * What the generator makes of the stored text (undefined when the key is absent). `recorded(path)`
 * says whether status recorded that field ready: an empty one then means lost data, reported
 * rather than regenerated.
 */
export async function fillRailsSecrets(
  g: Generator,
  stored: string | undefined,
  sources: Sources,
  recorded: (path: string) => boolean,
): Promise<RailsFill> {
  const env = g.env!;
  const fields = g.fields ?? [];
  const none = { filled: [], lost: [], present: [] };
  const doc = parseDocument(stored ?? "", { uniqueKeys: true });
  if (doc.errors.length) return { ...none, report: "secrets.yml does not parse as YAML" };
  if (doc.contents !== null && !isMap(doc.contents))
    return { ...none, report: "secrets.yml is not a map of environments" };
  const envNode = doc.contents === null ? undefined : doc.get(env, true);
  if (envNode !== undefined && !isEmpty(envNode) && !isMap(envNode))
    return { ...none, report: `secrets.yml's ${env} is not a map of fields` };
  const empty = fields.filter((f) => isEmpty(isMap(envNode) ? envNode.get(f.path, true) : undefined));
  const lost = empty.filter((f) => recorded(f.path)).map((f) => f.path);
  const fill = empty.filter((f) => !recorded(f.path));
  const present = fields.filter((f) => !empty.includes(f) || fill.includes(f)).map((f) => f.path);
  if (!fill.length) return { filled: [], lost, present };
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(envNode)) doc.set(env, doc.createNode({}));
  for (const f of fill) doc.setIn([env, f.path], doc.createNode(await fieldValue(f, sources)));
  return { text: doc.toString({ lineWidth: 0 }), filled: fill.map((f) => f.path), lost, present };
}
