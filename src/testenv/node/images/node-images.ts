import { formatDuration } from "../../duration.js";
import { runCommand } from "../../exec.js";
import type { NodeBinaries } from "../binaries.js";
import { type BuiltImage, ensureImageTarball } from "./cache.js";
import { imageCatalog } from "./catalog.js";
import { operatorImageSpec } from "./operator.js";

/** Every image the node offers, as cached docker-archive tarballs (built when their content changed). */
export async function ensureNodeImages(
  bin: NodeBinaries,
  bao: Record<string, string>,
  log: (line: string) => void,
): Promise<BuiltImage[]> {
  const started = Date.now();
  const images: BuiltImage[] = [];
  for (const spec of imageCatalog({ bao, kubectl: bin.kubectl, coredns: bin.coredns }))
    images.push(await ensureImageTarball(spec));
  images.push(await operatorImage(log));
  const built = images.filter((i) => i.built).map((i) => i.name);
  if (built.length > 0) log(`images written: ${built.join(", ")} (${formatDuration(Date.now() - started)})`);
  return images;
}

/** Imports tarballs into containerd's k8s.io namespace, where the CRI (and so kubelet) looks. */
export async function importImages(ctr: string, socket: string, images: BuiltImage[]): Promise<void> {
  await Promise.all(
    images.map((image) => runCommand(ctr, ["-a", socket, "-n", "k8s.io", "images", "import", image.tarball])),
  );
}

/**
 * Rebuilds the operator image from the working tree's dist/ and imports it into a running node:
 * what a developer runs after an edit. Returns the image and how many of its layers were rewritten.
 */
export async function reloadOperatorImage(
  ctr: string,
  socket: string,
  log: (line: string) => void = () => {},
): Promise<BuiltImage> {
  const image = await operatorImage(log);
  await importImages(ctr, socket, [image]);
  return image;
}

/**
 * The operator image from dist/ as it is now. A file that goes between listing dist/ and reading it
 * (another test's probe file, a build writing dist/) means the tree changed under the build: it is
 * listed again, a few times, rather than failing whoever asked.
 */
async function operatorImage(log: (line: string) => void): Promise<BuiltImage> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ensureImageTarball(await operatorImageSpec(log));
    } catch (e) {
      if (attempt >= 3 || (e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      log(`dist/ changed while the operator image was built (${(e as Error).message}); listing it again`);
    }
  }
}
