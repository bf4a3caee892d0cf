import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { parse } from "yaml";
import { RenderError } from "./errors.js";
import type { HelmRunner } from "./helm.js";
import type { ChartInfo } from "./types.js";

async function fileDigest(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

interface Entry {
  path: string;
  size: number;
  mtimeMs: number;
}

async function walk(root: string, dir = root, out: Entry[] = []): Promise<Entry[]> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, e.name);
    if (e.isDirectory()) await walk(root, full, out);
    else if (e.isFile()) {
      const s = await stat(full);
      out.push({ path: full, size: s.size, mtimeMs: s.mtimeMs });
    }
  }
  return out;
}

// A digest costs reading every byte; remembered per path while no file's size or mtime changes
// (a pulled archive is replaced by rename, which changes the inode too). Bounded: paths are few.
const digests = new Map<string, { fingerprint: string; digest: string }>();
function remember(path: string, fingerprint: string, digest: string): void {
  if (digests.size >= 256) digests.clear();
  digests.set(path, { fingerprint, digest });
}

/** sha256 over a chart folder's relative paths and contents (sorted), or of an archive's bytes. */
export async function chartDigest(chartPath: string): Promise<string> {
  const s = await stat(chartPath);
  if (!s.isDirectory()) {
    const fingerprint = `${s.size}:${s.mtimeMs}:${s.ino}`;
    const known = digests.get(chartPath);
    if (known?.fingerprint === fingerprint) return known.digest;
    const digest = await fileDigest(chartPath);
    remember(chartPath, fingerprint, digest);
    return digest;
  }
  const entries = (await walk(chartPath)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const fingerprint = entries.map((e) => `${e.path}:${e.size}:${e.mtimeMs}`).join("\n");
  const known = digests.get(chartPath);
  if (known?.fingerprint === fingerprint) return known.digest;
  const hash = createHash("sha256");
  for (const e of entries) {
    hash.update(relative(chartPath, e.path).split(sep).join("/"));
    hash.update("\0");
    hash.update(await fileDigest(e.path));
    hash.update("\n");
  }
  const digest = hash.digest("hex");
  remember(chartPath, fingerprint, digest);
  return digest;
}

function metadataFrom(text: string, where: string): Omit<ChartInfo, "digest"> {
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 10 });
  } catch {
    throw new RenderError(`${where}: Chart.yaml is not valid YAML`);
  }
  const meta = (doc ?? {}) as Record<string, unknown>;
  const name = meta["name"];
  const version = meta["version"];
  if (typeof name !== "string" || name === "") throw new RenderError(`${where}: Chart.yaml has no name`);
  if (typeof version !== "string" || version === "")
    throw new RenderError(`${where}: Chart.yaml has no version`);
  const app = meta["appVersion"];
  const appVersion = typeof app === "string" ? app : typeof app === "number" ? String(app) : undefined;
  return appVersion === undefined ? { name, version } : { name, version, appVersion };
}

// Keyed by digest: the same bytes always carry the same Chart.yaml.
const byDigest = new Map<string, ChartInfo>();

/** Name, version, appVersion and digest of a chart folder or archive (`helm show chart` for archives). */
export async function chartInfo(helm: HelmRunner, chartPath: string): Promise<ChartInfo> {
  let digest: string;
  try {
    digest = await chartDigest(chartPath);
  } catch (e) {
    throw new RenderError(`chart ${chartPath} cannot be read: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  const known = byDigest.get(digest);
  if (known) return known;
  const isDir = (await stat(chartPath)).isDirectory();
  const text = isDir
    ? await readFile(join(chartPath, "Chart.yaml"), "utf8").catch(() => {
        throw new RenderError(`chart ${chartPath} has no Chart.yaml`);
      })
    : (await helm.run(["show", "chart", chartPath])).stdout;
  const info = { ...metadataFrom(text, `chart ${chartPath}`), digest };
  if (byDigest.size > 256) byDigest.clear();
  byDigest.set(digest, info);
  return info;
}
