import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cacheRoot } from "./cache.js";
import { saveDigests, useDigestFile, writeDockerArchive, writeOciLayout } from "./node/images/archive.js";
import { operatorImageSpec } from "./node/images/operator.js";
import { repoRoot } from "./paths.js";

// `npm run image`: the operator image, built without a container engine by the same recipe the tests
// run on the local node, written as an OCI image layout and as a `docker load`-able archive.

export interface WrittenImage {
  layout: string;
  archive: string;
  /** The manifest digest: the image's identity. */
  digest: string;
  tags: string[];
}

export async function writeOperatorImage(out: string, log: (line: string) => void): Promise<WrittenImage> {
  const spec = await operatorImageSpec(log);
  const images = join(cacheRoot(), "images");
  const layers = join(images, "layers");
  mkdirSync(layers, { recursive: true });
  useDigestFile(join(images, "digests.json"));
  mkdirSync(out, { recursive: true });
  const layout = join(out, "oci");
  const archive = join(out, "platform-operator.tar");
  const manifest = writeOciLayout(spec, layout, layers);
  writeDockerArchive(spec, archive, layers);
  saveDigests();
  return { layout, archive, digest: manifest.digest, tags: spec.tags };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string" } }, strict: true });
  const out = resolve(values.out ?? join(repoRoot(), "dist", "image"));
  const image = await writeOperatorImage(out, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(
    `${image.tags.join(", ")} ${image.digest}\n  OCI layout: ${image.layout}\n  docker load -i ${image.archive}\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  main().catch((e: unknown) => {
    process.stderr.write(`image: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
