/**
 * Upstream openbao-operator's own sample manifests, read where the workspace keeps them (never copied
 * into the project): `../shared/upstream/openbao-operator-samples/` from the project's root, or the
 * folder named by OPENBAO_UPSTREAM_SAMPLES. Absent in a user's own clone: tests then skip, saying why.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export type Json = Record<string, unknown>;

export const UPSTREAM_SAMPLES_ENV = "OPENBAO_UPSTREAM_SAMPLES";

const root = fileURLToPath(new URL("../../../", import.meta.url));

export function upstreamSamplesDir(): string {
  return resolve(
    process.env[UPSTREAM_SAMPLES_ENV] ?? join(root, "..", "shared", "upstream", "openbao-operator-samples"),
  );
}

/** Why the samples cannot be read, or undefined when they can. */
export function upstreamSamplesMissing(): string | undefined {
  const dir = upstreamSamplesDir();
  if (existsSync(dir) && readdirSync(dir).some((f) => f.endsWith(".yaml"))) return undefined;
  return `upstream's samples are not at ${dir} (set ${UPSTREAM_SAMPLES_ENV} to the folder holding openbao-operator's config/samples)`;
}

export interface UpstreamDocument {
  /** Sample file name, e.g. openbao_v1alpha1_openbaocluster_hardened.yaml. */
  file: string;
  /** Short name: the file's suffix after openbao_v1alpha1_openbaocluster (basic for none). */
  sample: string;
  doc: Json;
}

/** Every document of every sample file, comments and all other kinds included, in file order. */
export function upstreamDocuments(): UpstreamDocument[] {
  const dir = upstreamSamplesDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), "utf8"))
        .map((d) => d.toJS() as Json | null)
        .filter((doc): doc is Json => doc !== null && typeof doc === "object")
        .map((doc) => ({ file, sample: sampleName(file), doc })),
    );
}

function sampleName(file: string): string {
  const m = /^openbao_v1alpha1_(openbaocluster|openbaorestore|openbaotenant)_?(.*)\.yaml$/.exec(file);
  if (!m) return file;
  if (m[1] !== "openbaocluster") return m[1] as string;
  return m[2] === "" ? "basic" : (m[2] as string);
}

/** The one OpenBaoCluster of a sample, as upstream wrote it. */
export function upstreamCluster(sample: string): Json {
  const found = upstreamDocuments().find((d) => d.sample === sample && d.doc["kind"] === "OpenBaoCluster");
  if (!found) throw new Error(`no OpenBaoCluster in upstream sample ${sample}`);
  return structuredClone(found.doc);
}
