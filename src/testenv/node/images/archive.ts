import { createHash } from "node:crypto";
import { readFileSync, renameSync, rmSync, statSync } from "node:fs";
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
  for (const layer of spec.layers) {
    hash.update("\0layer\0");
    for (const e of layer) {
      const { source, data, ...meta } = e as TarEntry & { source?: string; data?: Buffer };
      hash.update(JSON.stringify(meta));
      if (data) hash.update(data);
      if (source) hash.update(fileDigest(source));
    }
  }
  return hash.digest("hex").slice(0, 16);
}

// Hashing a 180 MB binary costs about half a second; a test run asks about the same files often.
const digests = new Map<string, string>();
function fileDigest(path: string): string {
  const st = statSync(path);
  const key = `${path}\0${st.size}\0${st.mtimeMs}`;
  let digest = digests.get(key);
  if (!digest) {
    digest = createHash("sha256").update(readFileSync(path)).digest("hex");
    digests.set(key, digest);
  }
  return digest;
}

/**
 * Writes a docker-archive tarball (the `docker save` layout that `ctr images import` reads):
 * manifest.json, the image config, and one uncompressed tar per layer named by its digest.
 */
export function writeDockerArchive(spec: ImageSpec, outPath: string, scratchDir: string): void {
  const layerFiles: Array<{ path: string; sha256: string; size: number }> = [];
  spec.layers.forEach((entries, i) => {
    const path = join(scratchDir, `layer-${i}.tar`);
    const writer = new TarWriter(path);
    for (const entry of entries) writer.add(entry);
    layerFiles.push({ path, ...writer.finish() });
  });
  const config = Buffer.from(
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
  for (const l of layerFiles) rmSync(l.path, { force: true });
  renameSync(partial, outPath);
}
