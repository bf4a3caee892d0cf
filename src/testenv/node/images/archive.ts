import { createHash } from "node:crypto";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { type TarEntry, TarWriter } from "./tar.js";

export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
}

export interface ImageSpec {
  /** Short name for files and progress, e.g. "pause". */
  name: string;
  /** Image references, e.g. "registry.k8s.io/pause:3.10". */
  tags: string[];
  /** Bottom layer first. */
  layers: TarEntry[][];
  config: ImageConfig;
}

/** A digest of everything that ends up in the image, so the cache key changes exactly when it does. */
export function imageKey(spec: ImageSpec): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ tags: spec.tags, config: spec.config }));
  for (const layer of spec.layers) hash.update(`\0${layerKey(layer)}`);
  return hash.digest("hex").slice(0, 16);
}

/** A digest of one layer's entries and the content of every file in it. */
export function layerKey(entries: TarEntry[]): string {
  const hash = createHash("sha256");
  for (const e of entries) {
    const { source, data, ...meta } = e as TarEntry & { source?: string; data?: Buffer };
    hash.update(JSON.stringify(meta));
    if (data) hash.update(data);
    if (source) hash.update(fileDigest(source));
  }
  return hash.digest("hex").slice(0, 32);
}

// Hashing a 180 MB binary costs about half a second, and every start asks about ~700 MB of them. The
// digest is remembered per (path, size, mtime, inode), in memory and in a file next to the layers.
const digests = new Map<string, string>();
// Only digests this process needed are written back, so files that no longer exist drop out.
const used = new Set<string>();
let digestFile: string | undefined;

/** Remembers file digests across processes in `path` (loaded now, saved by saveDigests()). */
export function useDigestFile(path: string): void {
  if (digestFile === path) return;
  digestFile = path;
  try {
    for (const [k, v] of Object.entries(JSON.parse(readFileSync(path, "utf8")) as Record<string, string>)) {
      digests.set(k, v);
    }
  } catch {
    // First use, or a torn file: digests are recomputed.
  }
}

export function saveDigests(): void {
  if (!digestFile) return;
  const partial = `${digestFile}.partial-${process.pid}`;
  writeFileSync(partial, JSON.stringify(Object.fromEntries([...used].map((k) => [k, digests.get(k)]))));
  renameSync(partial, digestFile);
}

function fileDigest(path: string): string {
  const st = statSync(path);
  const key = `${path}\0${st.size}\0${st.mtimeMs}\0${st.ino}`;
  used.add(key);
  let digest = digests.get(key);
  if (!digest) {
    digest = createHash("sha256").update(readFileSync(path)).digest("hex");
    digests.set(key, digest);
  }
  return digest;
}

/** The image config (the same bytes in a docker archive and an OCI layout, so the same image ID). */
function configBlob(spec: ImageSpec, layerFiles: { sha256: string }[]): Buffer {
  return Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      created: "1970-01-01T00:00:00Z",
      config: spec.config,
      rootfs: { type: "layers", diff_ids: layerFiles.map((l) => `sha256:${l.sha256}`) },
      history: layerFiles.map(() => ({
        created: "1970-01-01T00:00:00Z",
        created_by: "platform-operator testenv",
      })),
    }),
  );
}

/**
 * Writes a docker-archive tarball (the `docker save` layout that `ctr images import` reads):
 * manifest.json, the image config, and one uncompressed tar per layer named by its digest.
 */
export function writeDockerArchive(spec: ImageSpec, outPath: string, layerDir: string): void {
  const layerFiles = spec.layers.map((entries) => cachedLayer(entries, layerDir));
  const config = configBlob(spec, layerFiles);
  const configName = `${createHash("sha256").update(config).digest("hex")}.json`;
  const manifest = Buffer.from(
    JSON.stringify([
      { Config: configName, RepoTags: spec.tags, Layers: layerFiles.map((l) => `${l.sha256}/layer.tar`) },
    ]),
  );
  const partial = `${outPath}.partial-${process.pid}`;
  const out = new TarWriter(partial);
  out.add({ type: "file", path: configName, mode: 0o644, data: config });
  for (const l of layerFiles) {
    out.add({ type: "dir", path: l.sha256, mode: 0o755 });
    out.add({ type: "file", path: `${l.sha256}/layer.tar`, mode: 0o644, source: l.path, size: l.size });
  }
  out.add({ type: "file", path: "manifest.json", mode: 0o644, data: manifest });
  out.finish();
  renameSync(partial, outPath);
}

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar";

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  artifactType?: string;
}

/** Writes one blob into an OCI layout's blobs/sha256/ and returns its descriptor. */
export function writeBlob(layout: string, mediaType: string, data: Buffer): Descriptor {
  const hex = createHash("sha256").update(data).digest("hex");
  mkdirSync(join(layout, "blobs", "sha256"), { recursive: true });
  writeFileSync(join(layout, "blobs", "sha256", hex), data);
  return { mediaType, digest: `sha256:${hex}`, size: data.length };
}

/**
 * Writes the image as an OCI image layout (oci-layout, index.json, blobs/sha256/...), the form
 * registries, cosign and skopeo read from disk; the index names it by its first tag. Returns the
 * manifest's descriptor: its digest is the image's identity, what a signature covers.
 */
export function writeOciLayout(spec: ImageSpec, layout: string, layerDir: string): Descriptor {
  rmSync(layout, { recursive: true, force: true });
  mkdirSync(join(layout, "blobs", "sha256"), { recursive: true });
  const layerFiles = spec.layers.map((entries) => cachedLayer(entries, layerDir));
  const layers: Descriptor[] = layerFiles.map((l) => {
    copyFileSync(l.path, join(layout, "blobs", "sha256", l.sha256));
    return { mediaType: OCI_LAYER, digest: `sha256:${l.sha256}`, size: l.size };
  });
  const config = writeBlob(layout, OCI_CONFIG, configBlob(spec, layerFiles));
  const manifest = writeBlob(
    layout,
    OCI_MANIFEST,
    Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers })),
  );
  const named = {
    ...manifest,
    annotations: { "org.opencontainers.image.ref.name": spec.tags[0] ?? spec.name },
  };
  writeFileSync(join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(
    join(layout, "index.json"),
    JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [named] }),
  );
  return manifest;
}

/**
 * One layer's tar from `layerDir`, written when missing. Layers are cached apart from images, so an
 * edit to the operator's code rewrites only the small top layer, not Node or node_modules.
 */
function cachedLayer(entries: TarEntry[], layerDir: string): { path: string; sha256: string; size: number } {
  const key = layerKey(entries);
  const path = join(layerDir, `${key}.tar`);
  const metaPath = join(layerDir, `${key}.json`);
  try {
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as { sha256: string; size: number };
    if (statSync(path).size === meta.size) {
      const now = new Date();
      utimesSync(path, now, now); // marks it used, for pruning
      return { path, ...meta };
    }
  } catch {
    // Not cached yet.
  }
  const partial = `${path}.partial-${process.pid}`;
  const writer = new TarWriter(partial);
  for (const entry of entries) writer.add(entry);
  const meta = writer.finish();
  renameSync(partial, path);
  writeFileSync(metaPath, JSON.stringify(meta));
  return { path, ...meta };
}

/** Removes cached layers not used for `maxAgeMs` (an image rebuild touches the ones it uses). */
export function pruneLayers(layerDir: string, maxAgeMs: number): void {
  const cutoff = Date.now() - maxAgeMs;
  for (const name of readdirSync(layerDir)) {
    if (!name.endsWith(".tar")) continue;
    const path = join(layerDir, name);
    try {
      if (statSync(path).mtimeMs < cutoff) {
        rmSync(path, { force: true });
        rmSync(path.replace(/\.tar$/, ".json"), { force: true });
      }
    } catch {
      // Removed by a concurrent run.
    }
  }
}
