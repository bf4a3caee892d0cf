import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { exists } from "../../atomic.js";
import { cacheRoot } from "../../cache.js";
import {
  type ImageSpec,
  imageKey,
  pruneLayers,
  saveDigests,
  useDigestFile,
  writeDockerArchive,
} from "./archive.js";

export interface BuiltImage {
  name: string;
  tags: string[];
  tarball: string;
  /** False when the tarball came from the cache. */
  built: boolean;
}

/**
 * The image's tarball from the cache (keyed by the digest of its content), writing it only when
 * missing; older tarballs of the same image are removed so the cache does not grow per edit.
 */
export async function ensureImageTarball(spec: ImageSpec): Promise<BuiltImage> {
  const dir = join(cacheRoot(), "images");
  mkdirSync(dir, { recursive: true });
  useDigestFile(join(dir, "digests.json"));
  const key = imageKey(spec);
  saveDigests();
  const tarball = join(dir, `${spec.name}-${key}.tar`);
  if (await exists(tarball)) return { name: spec.name, tags: spec.tags, tarball, built: false };
  const layers = join(dir, "layers");
  mkdirSync(layers, { recursive: true });
  writeDockerArchive(spec, tarball, layers);
  pruneLayers(layers, 7 * 24 * 3600_000);
  // Older tarballs of this image go, but not at once: a node starting right now may be importing one.
  const cutoff = Date.now() - 10 * 60_000;
  for (const old of readdirSync(dir)) {
    if (old.startsWith(`${spec.name}-`) && old.endsWith(".tar") && join(dir, old) !== tarball) {
      const path = join(dir, old);
      if (/^[0-9a-f]{16}\.tar$/.test(old.slice(spec.name.length + 1)) && statSync(path).mtimeMs < cutoff)
        rmSync(path, { force: true });
    }
  }
  return { name: spec.name, tags: spec.tags, tarball, built: true };
}
