import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { ManifestDocument } from "../runtime/target.js";

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * Reads every YAML/JSON document from files, folders (recursively) or "-" for stdin. Lists
 * (`kind: List`) are flattened so `kubectl get -o yaml` output checks as well as plain files.
 */
export function readManifests(
  sources: string[],
  stdin: () => string = () => readFileSync(0, "utf8"),
): ManifestDocument[] {
  const docs: ManifestDocument[] = [];
  for (const source of sources) {
    if (source === "-") {
      docs.push(...parseText(stdin(), "<stdin>"));
      continue;
    }
    for (const file of expand(source)) docs.push(...parseText(readFileSync(file, "utf8"), file));
  }
  return docs;
}

function expand(source: string): string[] {
  const st = statSync(source, { throwIfNoEntry: false });
  if (!st) throw new Error(`${source}: no such file or folder`);
  if (!st.isDirectory()) return [source];
  return readdirSync(source, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const p = join(source, e.name);
      if (e.isDirectory()) return expand(p);
      return MANIFEST_FILE.test(e.name) ? [p] : [];
    });
}

export class ManifestParseError extends Error {}

function parseText(text: string, file: string): ManifestDocument[] {
  const out: ManifestDocument[] = [];
  for (const d of parseAllDocuments(text)) {
    if ("errors" in d && d.errors.length > 0) {
      const err = d.errors[0]!;
      throw new ManifestParseError(`${file}: ${err.message.split("\n")[0]}`);
    }
    const doc = d.toJS({ maxAliasCount: 100 }) as unknown;
    if (doc === null || doc === undefined) continue;
    const list = doc as { kind?: string; items?: unknown[] };
    if (typeof list === "object" && list.kind?.endsWith("List") && Array.isArray(list.items)) {
      for (const item of list.items) out.push({ file, doc: item });
    } else {
      out.push({ file, doc });
    }
  }
  return out;
}
