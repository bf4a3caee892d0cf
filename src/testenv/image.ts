import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cacheRoot } from "./cache.js";
import { runCommand } from "./exec.js";
import { ensurePackagedFixtureCharts } from "./gitlab-charts.js";
import { ensureHelm, HELM_VERSION } from "./helm.js";
import {
  attachReferrer,
  cycloneDxSbom,
  type ImageInputs,
  PROVENANCE_TYPE,
  SBOM_TYPE,
  slsaProvenance,
} from "./image-attestations.js";
import { ensureOperatorNode, OPERATOR_NODE_VERSION } from "./lts-node.js";
import { saveDigests, useDigestFile, writeDockerArchive, writeOciLayout } from "./node/images/archive.js";
import { ensureDistrolessRoot } from "./node/images/distroless.js";
import { ensureProductionModules, operatorImageSpec } from "./node/images/operator.js";
import { repoRoot } from "./paths.js";

// `npm run image`: the operator image, built without a container engine by the same recipe the tests
// run on the local node, written as an OCI image layout and as a `docker load`-able archive.

export interface WrittenImage {
  layout: string;
  archive: string;
  /** The manifest digest: the image's identity. */
  digest: string;
  tags: string[];
  /** Digests of the SBOM and provenance referrer manifests in the layout. */
  sbom: string;
  provenance: string;
}

const COMMAND = "npm run image";

export async function writeOperatorImage(out: string, log: (line: string) => void): Promise<WrittenImage> {
  const startedOn = new Date();
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
  const inputs = await imageInputs(log);
  const name = spec.tags[0]!.replace(/:[^:/]+$/, "");
  const sbomDoc = cycloneDxSbom(inputs, manifest.digest);
  const statement = slsaProvenance(inputs, { name, digest: manifest.digest }, startedOn);
  const sbom = attachReferrer(layout, manifest, SBOM_TYPE, sbomDoc);
  const provenance = attachReferrer(layout, manifest, PROVENANCE_TYPE, statement);
  // The same documents as files, for `cosign attest --predicate` once the image is in a registry.
  writeFileSync(join(out, "sbom.cdx.json"), `${JSON.stringify(sbomDoc, null, 2)}\n`);
  writeFileSync(join(out, "provenance.intoto.json"), `${JSON.stringify(statement, null, 2)}\n`);
  return {
    layout,
    archive,
    digest: manifest.digest,
    tags: spec.tags,
    sbom: sbom.digest,
    provenance: provenance.digest,
  };
}

/** The build's inputs, as the image recipe takes them (each ensure* is a cache hit by now). */
async function imageInputs(log: (line: string) => void): Promise<ImageInputs> {
  const root = repoRoot();
  const [base, node, modules, helm, charts] = await Promise.all([
    ensureDistrolessRoot(log),
    ensureOperatorNode(log),
    ensureProductionModules(log),
    ensureHelm(log),
    ensurePackagedFixtureCharts(log),
  ]);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    name: string;
    version: string;
  };
  const commit = (await runCommand("git", ["rev-parse", "HEAD"], { cwd: root })).stdout.trim();
  const files: Record<string, string> = {
    "package.json": join(root, "package.json"),
    "package-lock.json": join(root, "package-lock.json"),
  };
  for (const f of readdirSync(charts)
    .filter((f) => f.endsWith(".tgz"))
    .sort())
    files[`charts/${f}`] = join(charts, f);
  return {
    name: pkg.name,
    version: pkg.version,
    nodeModules: modules,
    node: { version: OPERATOR_NODE_VERSION, path: node },
    helm: { version: HELM_VERSION, path: helm },
    debian: base.packages,
    files,
    commit,
    command: COMMAND,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: "string" } }, strict: true });
  const out = resolve(values.out ?? join(repoRoot(), "dist", "image"));
  const image = await writeOperatorImage(out, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(
    [
      `${image.tags.join(", ")} ${image.digest}`,
      `  OCI layout: ${image.layout} (with its SBOM ${image.sbom} and provenance ${image.provenance} as referrers)`,
      `  docker load -i ${image.archive}`,
      "",
    ].join("\n"),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  main().catch((e: unknown) => {
    process.stderr.write(`image: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
