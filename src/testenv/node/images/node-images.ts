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
  const specs = [
    ...imageCatalog({ bao, kubectl: bin.kubectl, coredns: bin.coredns }),
    await operatorImageSpec(log),
  ];
  const images: BuiltImage[] = [];
  for (const spec of specs) images.push(await ensureImageTarball(spec));
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
  const image = await ensureImageTarball(await operatorImageSpec(log));
  await importImages(ctr, socket, [image]);
  return image;
}
