/** Writes the generated CRDs to disk; `platform-operator crds [--write <dir>]` calls this. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CustomResourceDefinition, crdToYaml } from "./crd.js";
import { allKinds } from "./index.js";

/** `<group>_<plural>.yaml`, the name controller-gen gives the same file. */
export const crdFileName = (crd: CustomResourceDefinition): string =>
  `${crd.spec.group}_${crd.spec.names.plural}.yaml`;

/** Every CRD as the file it becomes, sorted by file name so the order never depends on the kind list. */
export function renderCrdFiles(): { fileName: string; content: string }[] {
  return allKinds
    .map((k) => ({ fileName: crdFileName(k.crd), content: crdToYaml(k.crd) }))
    .sort((a, b) => a.fileName.localeCompare(b.fileName));
}

/** All CRDs as one multi-document stream, for `kubectl apply -f -`. */
export function crdsAsYaml(): string {
  return renderCrdFiles()
    .map((f) => `---\n${f.content}`)
    .join("");
}

/**
 * Writes one file per CRD into `dir` (created if missing) and returns the paths written.
 * Synchronous on purpose: it runs once from the CLI and nothing waits on it.
 */
export function writeCrds(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return renderCrdFiles().map((file) => {
    const path = join(dir, file.fileName);
    writeFileSync(path, file.content, "utf8");
    return path;
  });
}
