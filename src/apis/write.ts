/** Writes the generated CRDs to disk; `platform-operator crds --write <dir>` calls this. */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CustomResourceDefinition, crdToYaml } from "./crd.js";
import { allKinds } from "./index.js";

/** `<group>_<plural>.yaml`, the name controller-gen gives the same file. */
export const crdFileName = (crd: CustomResourceDefinition): string =>
  `${crd.spec.group}_${crd.spec.names.plural}.yaml`;

/** Every CRD as the file it becomes, in a stable order. */
export function renderCrdFiles(): { fileName: string; content: string }[] {
  return allKinds
    .map((k) => ({ fileName: crdFileName(k.crd), content: crdToYaml(k.crd) }))
    .sort((a, b) => a.fileName.localeCompare(b.fileName));
}

/** Writes one file per CRD into `dir` (created if missing) and returns the paths written. */
export async function writeCrds(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const file of renderCrdFiles()) {
    const path = join(dir, file.fileName);
    await writeFile(path, file.content, "utf8");
    written.push(path);
  }
  return written;
}
