import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { offlineCosignEnv, runCosign } from "../../src/testenv/cosign.js";
import { OCI_MANIFEST } from "../../src/testenv/node/images/archive.js";
import { pushBlob, pushManifest } from "../../src/testenv/oci-push.js";
import type { OciRegistry } from "../../src/testenv/oci-registry.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

// Small images in the tests' loopback registry, signed (or not) by real cosign with keys it
// generates, offline: what image verification is tested against. An image here is a config blob and
// no layers — enough for a manifest digest and a signature, not for a pod to run.

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** A cosign key pair in a folder of its own: `pub` is the PEM public key. */
export interface CosignKey {
  dir: string;
  env: NodeJS.ProcessEnv;
  pub: string;
}

export async function cosignKey(name: string): Promise<CosignKey> {
  const dir = makeTempDir(`cosign-${name}`);
  const env = offlineCosignEnv(dir, `test-only password ${name}`);
  await runCosign(["generate-key-pair"], { env, cwd: dir });
  return { dir, env, pub: readFileSync(join(dir, "cosign.pub"), "utf8") };
}

/** Pushes a one-blob image as `repository:tag`; returns its manifest digest. */
export async function pushTinyImage(
  registry: OciRegistry,
  repository: string,
  tag: string,
  marker = `${repository}:${tag}`,
): Promise<string> {
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Env: [`MARKER=${marker}`] },
      rootfs: { type: "layers", diff_ids: [] },
    }),
  );
  await pushBlob(registry.url, repository, sha256(config), config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: sha256(config),
        size: config.length,
      },
      layers: [],
    }),
  );
  return pushManifest(registry.url, repository, tag, OCI_MANIFEST, manifest);
}

/** Signs the image by digest with `key`, no transparency log (there is none offline). */
export async function cosignSign(key: CosignKey, imageByDigest: string): Promise<void> {
  await runCosign(
    ["sign", "--key", "cosign.key", "--tlog-upload=false", "--allow-http-registry", "--yes", imageByDigest],
    { env: key.env, cwd: key.dir },
  );
}
