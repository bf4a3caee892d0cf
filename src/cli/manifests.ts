import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isMap, isSeq, LineCounter, type Node, parseAllDocuments } from "yaml";
import type { ManifestDocument, ManifestProblem } from "../runtime/target.js";

const MANIFEST_FILE = /\.(ya?ml|json)$/i;
const STDIN = "<stdin>";

export interface LoadedManifests {
  docs: ManifestDocument[];
  /** Inputs that could not be read or parsed; the documents that could still are in `docs`. */
  problems: ManifestProblem[];
}

/**
 * Reads every YAML/JSON document from files, folders (recursively) or "-" for stdin. Lists
 * (`kind: List`) are flattened so `kubectl get -o yaml` output checks as well as plain files. A file
 * that is missing or does not parse becomes a problem and the others are still read, so one broken
 * file cannot hide what is wrong elsewhere.
 */
export function loadManifests(
  sources: string[],
  stdin: () => string = () => readFileSync(0, "utf8"),
): LoadedManifests {
  const out: LoadedManifests = { docs: [], problems: [] };
  for (const source of sources) {
    if (source === "-") {
      const text = stdin();
      if (text.includes("\u0000") || text.includes("\ufffd"))
        out.problems.push({ file: STDIN, message: "is not text (binary content): not YAML or JSON" });
      else parseText(text, STDIN, out);
      continue;
    }
    for (const file of expand(source, out.problems)) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (e) {
        out.problems.push({ file, message: `cannot read: ${(e as Error).message}` });
        continue;
      }
      const text = asText(bytes);
      if (text === undefined) {
        out.problems.push({ file, message: "is not a text file (binary content): not YAML or JSON" });
        continue;
      }
      parseText(text, file, out);
    }
  }
  return out;
}

/** As loadManifests, for inputs that must be whole (the samples): the first problem is thrown. */
export function readManifests(sources: string[]): ManifestDocument[] {
  const { docs, problems } = loadManifests(sources);
  if (problems.length > 0) throw new ManifestParseError(formatProblem(problems[0]!));
  return docs;
}

/**
 * The file's text, or undefined for binary content: bytes that are not UTF-8, or a NUL, which no
 * YAML or JSON manifest has. The YAML parser would otherwise read much binary data as one string.
 */
function asText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export class ManifestParseError extends Error {}

function expand(source: string, problems: ManifestProblem[]): string[] {
  const st = statSync(source, { throwIfNoEntry: false });
  if (!st) {
    problems.push({ file: source, message: "no such file or folder" });
    return [];
  }
  if (!st.isDirectory()) return [source];
  return readdirSync(source, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const p = join(source, e.name);
      if (e.isDirectory()) return expand(p, problems);
      return MANIFEST_FILE.test(e.name) ? [p] : [];
    });
}

function parseText(text: string, file: string, out: LoadedManifests): void {
  const lines = new LineCounter();
  const lineOf = (node: Node | null | undefined): number | undefined =>
    node?.range ? lines.linePos(node.range[0]).line : undefined;
  let document = 0;
  for (const d of parseAllDocuments(text, { lineCounter: lines })) {
    document++;
    if (d.errors.length > 0) {
      // The parser's message carries the position and a picture of the line: keep all of it.
      for (const err of d.errors) {
        const line = err.linePos?.[0]?.line;
        out.problems.push({ file, document, line, message: `YAML syntax error: ${err.message.trimEnd()}` });
      }
      continue;
    }
    const at = { file, document, line: lineOf(d.contents) };
    let value: unknown;
    try {
      value = d.toJS({ maxAliasCount: 100 }) as unknown;
    } catch (e) {
      // e.g. an alias bomb: refused by the alias count, reported like any other bad input.
      out.problems.push({ ...at, message: `cannot read the document: ${(e as Error).message}` });
      continue;
    }
    if (value === null || value === undefined) continue;
    const list = value as { kind?: unknown; items?: unknown };
    if (typeof list === "object" && typeof list.kind === "string" && list.kind.endsWith("List")) {
      if (Array.isArray(list.items)) {
        const itemNodes = isMap(d.contents) ? d.contents.get("items", true) : undefined;
        list.items.forEach((doc, i) => {
          const node = isSeq(itemNodes) ? (itemNodes.items[i] as Node | undefined) : undefined;
          out.docs.push({ file, document, line: lineOf(node) ?? at.line, doc });
        });
        continue;
      }
    }
    out.docs.push({ ...at, doc: value });
  }
}

/** `file:line: document N: object: key: message`, leaving out what is unknown. */
export function formatProblem(p: ManifestProblem): string {
  const place = p.line === undefined ? p.file : `${p.file}:${p.line}`;
  // Some checks already lead their message with the key; say it once.
  const key = p.key && !p.message.startsWith(`${p.key}: `) ? p.key : undefined;
  const where = [place, p.document === undefined ? undefined : `document ${p.document}`, p.object, key]
    .filter(Boolean)
    .join(": ");
  // A multi-line message (a YAML error's picture of the line) stays readable under its first line.
  const severity = p.severity === "warning" ? "warning: " : "";
  return `${where}: ${severity}${p.message.replace(/\n/g, "\n    ")}`;
}
