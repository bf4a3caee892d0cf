// Reading what offline validation needs from a charts directory: which chart versions it holds, and
// one chart's values.yaml and values.schema.json. The directory follows the operator's layout
// (HELM_CHARTS): `<dir>/gitlab-<version>.tgz` (as `helm package` writes it) or an unpacked
// `<dir>/gitlab/<version>/`. Archives are read in memory with a size cap, never unpacked to disk.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { parse } from "yaml";
import { canonical } from "../version/versions.js";
import { isMap, type Values } from "./merge.js";

export const CHART_NAME = "gitlab";
/** A packaged GitLab chart is a few MiB unpacked; anything far beyond is not a chart. */
const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

export interface ChartFiles {
  version: string;
  /** Where it was read, for messages. */
  source: string;
  /** The chart's values.yaml (empty when it has none). */
  defaults: Values;
  /** The chart's values.schema.json, parsed; undefined when the chart has none. */
  schema: unknown;
}

/** The chart versions in a charts directory, canonical; unreadable entries are skipped. */
export function chartVersionsIn(dir: string): string[] {
  const out = new Set<string>();
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const archive = new RegExp(`^${CHART_NAME}-(.+)\\.tgz$`);
  for (const e of entries) {
    const m = archive.exec(e);
    const v = m ? canonical(m[1]!) : undefined;
    if (v) out.add(v);
  }
  try {
    for (const e of readdirSync(join(dir, CHART_NAME))) {
      const v = canonical(e);
      if (v && statSync(join(dir, CHART_NAME, e)).isDirectory()) out.add(v);
    }
  } catch {
    // no unpacked charts
  }
  return [...out];
}

export type ChartRead = { ok: true; chart: ChartFiles } | { ok: false; error: string };

/** The chart of `version` in `dir`, or why it cannot be read. */
export function readChart(dir: string, version: string): ChartRead {
  const unpacked = [join(dir, CHART_NAME, version), join(dir, CHART_NAME, `v${version}`)].find((p) =>
    existsSync(join(p, "Chart.yaml")),
  );
  const archive = [
    join(dir, `${CHART_NAME}-${version}.tgz`),
    join(dir, `${CHART_NAME}-v${version}.tgz`),
  ].find((p) => existsSync(p));
  try {
    if (unpacked) {
      const file = (name: string) => {
        const p = join(unpacked, name);
        return existsSync(p) ? readFileSync(p, "utf8") : undefined;
      };
      return build(version, unpacked, file("values.yaml"), file("values.schema.json"));
    }
    if (archive) {
      const files = readArchive(archive);
      const top = (name: string) => {
        for (const [path, text] of files)
          if (path.split("/").length === 2 && path.endsWith(`/${name}`)) return text;
        return undefined;
      };
      return build(version, archive, top("values.yaml"), top("values.schema.json"));
    }
  } catch (e) {
    return { ok: false, error: `cannot read chart ${version}: ${(e as Error).message}` };
  }
  return { ok: false, error: `no chart ${CHART_NAME} ${version} in ${dir}` };
}

function build(
  version: string,
  source: string,
  values: string | undefined,
  schema: string | undefined,
): ChartRead {
  let defaults: unknown = {};
  if (values !== undefined) defaults = parse(values) ?? {};
  if (!isMap(defaults)) return { ok: false, error: `${source}: values.yaml is not a map` };
  let parsedSchema: unknown;
  if (schema !== undefined) {
    try {
      parsedSchema = JSON.parse(schema);
    } catch (e) {
      return { ok: false, error: `${source}: values.schema.json is not JSON: ${(e as Error).message}` };
    }
  }
  return { ok: true, chart: { version, source, defaults, schema: parsedSchema } };
}

/** The regular files of a .tgz (ustar or GNU tar), by path, as text: only the small files are wanted. */
function readArchive(path: string): Map<string, string> {
  const tar = gunzipSync(readFileSync(path), { maxOutputLength: MAX_UNPACKED_BYTES });
  const out = new Map<string, string>();
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, len: number) =>
      header
        .subarray(start, start + len)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    if (!Number.isFinite(size) || size < 0) throw new Error("malformed tar header");
    const type = field(156, 1);
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = undefined;
    const body = tar.subarray(offset + 512, offset + 512 + size);
    if (type === "L") longName = body.toString("utf8").replace(/\0.*$/s, "");
    else if (type === "x") {
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString("utf8"));
      if (m) longName = m[1];
    } else if ((type === "0" || type === "") && size <= 16 * 1024 * 1024) {
      name = name.replace(/^\.\//, "");
      out.set(name, body.toString("utf8"));
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}
