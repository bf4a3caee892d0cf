import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Descriptor, OCI_MANIFEST, writeBlob } from "./node/images/archive.js";
import type { DebianPackage } from "./node/images/distroless.js";

// What the image is made of and how it was made, as two documents attached to it in its OCI layout
// (OCI 1.1 referrers: artifact manifests whose subject is the image manifest): a CycloneDX SBOM of the
// npm dependency tree, the Go modules inside helm, Node and the Debian packages of the base; and an
// in-toto statement with an SLSA provenance v1 predicate naming the source commit, the build
// command and the digests of the inputs.

export const SBOM_TYPE = "application/vnd.cyclonedx+json";
export const PROVENANCE_TYPE = "application/vnd.in-toto+json";
const EMPTY_CONFIG = "application/vnd.oci.empty.v1+json";

export interface ImageInputs {
  name: string;
  version: string;
  /** Installed production node_modules (its .package-lock.json is npm's record of what is there). */
  nodeModules: string;
  node: { version: string; path: string };
  helm: { version: string; path: string };
  debian: DebianPackage[];
  /** Files whose digests are build inputs: package-lock.json, the charts, ... (name -> path). */
  files: Record<string, string>;
  commit: string;
  command: string;
}

const sha256File = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

interface Component {
  type: string;
  "bom-ref": string;
  name: string;
  version: string;
  purl: string;
  hashes?: { alg: string; content: string }[];
  licenses?: { expression: string }[];
}

function npmPurl(name: string, version: string): string {
  const [scope, bare] = name.startsWith("@") ? name.split("/") : [undefined, name];
  return `pkg:npm/${scope ? `${encodeURIComponent(scope)}/` : ""}${bare}@${version}`;
}

/** The npm tree as installed: components, and each package's resolved dependencies (Node's lookup). */
function npmTree(nodeModules: string): { components: Component[]; dependencies: Map<string, string[]> } {
  const lock = JSON.parse(readFileSync(join(nodeModules, ".package-lock.json"), "utf8")) as {
    packages: Record<
      string,
      {
        version?: string;
        integrity?: string;
        license?: string;
        dependencies?: Record<string, string>;
        optionalDependencies?: Record<string, string>;
      }
    >;
  };
  const refOf = new Map<string, string>();
  const components: Component[] = [];
  for (const [path, p] of Object.entries(lock.packages)) {
    if (!path || !p.version) continue;
    const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    const purl = npmPurl(name, p.version);
    refOf.set(path, purl);
    const c: Component = { type: "library", "bom-ref": purl, name, version: p.version, purl };
    const sri = /^sha512-(.+)$/.exec(p.integrity ?? "")?.[1];
    if (sri) c.hashes = [{ alg: "SHA-512", content: Buffer.from(sri, "base64").toString("hex") }];
    if (p.license) c.licenses = [{ expression: p.license }];
    components.push(c);
  }
  const dependencies = new Map<string, string[]>();
  for (const [path, p] of Object.entries(lock.packages)) {
    const from = refOf.get(path);
    if (!from) continue;
    const on: string[] = [];
    for (const dep of Object.keys({ ...p.dependencies, ...p.optionalDependencies })) {
      // Node looks in <path>/node_modules/<dep>, then in each parent's node_modules.
      let base = path;
      for (;;) {
        const found =
          refOf.get(`${base}/node_modules/${dep}`) ??
          (base === "" ? refOf.get(`node_modules/${dep}`) : undefined);
        if (found) {
          on.push(found);
          break;
        }
        if (base === "") break;
        const cut = base.lastIndexOf("/node_modules/");
        base = cut < 0 ? "" : base.slice(0, cut);
      }
    }
    dependencies.set(from, [...new Set(on)].sort());
  }
  return { components, dependencies };
}

/** `go version -m`: the modules compiled into a Go binary. */
function goModules(binary: string): Component[] {
  const out = execFileSync("go", ["version", "-m", binary], { encoding: "utf8" });
  const mods: Component[] = [];
  for (const line of out.split("\n")) {
    const f = line.trim().split(/\s+/);
    if ((f[0] !== "dep" && f[0] !== "=>") || !f[1] || !f[2]) continue;
    const purl = `pkg:golang/${f[1]}@${f[2]}`;
    const c: Component = { type: "library", "bom-ref": purl, name: f[1], version: f[2], purl };
    // The go.sum hash (h1:, base64 SHA-256 of the module tree) is what Go verified.
    if (f[3]?.startsWith("h1:"))
      c.hashes = [{ alg: "SHA-256", content: Buffer.from(f[3].slice(3), "base64").toString("hex") }];
    mods.push(c);
  }
  return mods;
}

export function cycloneDxSbom(inputs: ImageInputs, imageDigest: string): Record<string, unknown> {
  const npm = npmTree(inputs.nodeModules);
  const app = `pkg:npm/${inputs.name}@${inputs.version}`;
  const helmRef = `pkg:golang/helm.sh/helm/v3@${inputs.helm.version}`;
  const helmMods = goModules(inputs.helm.path);
  const nodeRef = `pkg:generic/node@${inputs.node.version}`;
  const debs = inputs.debian.map((d): Component => {
    const purl = `pkg:deb/debian/${d.name}@${encodeURIComponent(d.version)}?arch=${d.architecture}`;
    return { type: "library", "bom-ref": purl, name: d.name, version: d.version, purl };
  });
  const direct = JSON.parse(readFileSync(join(inputs.nodeModules, "..", "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const appDeps = Object.keys(direct.dependencies ?? {})
    .map((d) => npm.components.find((c) => c.name === d && npm.dependencies.has(c["bom-ref"]))?.["bom-ref"])
    .filter((r): r is string => !!r);
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: new Date().toISOString(),
      component: {
        type: "container",
        "bom-ref": `pkg:oci/${inputs.name}@${encodeURIComponent(imageDigest)}`,
        name: inputs.name,
        version: inputs.version,
      },
    },
    components: [
      { type: "application", "bom-ref": app, name: inputs.name, version: inputs.version, purl: app },
      {
        type: "application",
        "bom-ref": nodeRef,
        name: "node",
        version: inputs.node.version,
        purl: nodeRef,
        hashes: [{ alg: "SHA-256", content: sha256File(inputs.node.path) }],
      },
      {
        type: "application",
        "bom-ref": helmRef,
        name: "helm",
        version: inputs.helm.version,
        purl: helmRef,
        hashes: [{ alg: "SHA-256", content: sha256File(inputs.helm.path) }],
        components: helmMods,
      },
      ...npm.components,
      ...debs,
    ],
    dependencies: [
      { ref: app, dependsOn: appDeps.sort() },
      { ref: helmRef, dependsOn: helmMods.map((m) => m["bom-ref"]) },
      ...[...npm.dependencies].map(([ref, dependsOn]) => ({ ref, dependsOn })),
    ],
  };
}

/**
 * RFC 3339 to the second: cosign's slsaprovenance1 attestation decodes the predicate into Go's
 * time.Time and encodes it again, which would turn "...00.120Z" into "...00.12Z".
 */
function wholeSeconds(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function slsaProvenance(
  inputs: ImageInputs,
  image: { name: string; digest: string },
  startedOn: Date,
): Record<string, unknown> {
  const hex = (d: string) => d.replace(/^sha256:/, "");
  return {
    _type: "https://in-toto.io/Statement/v1",
    subject: [{ name: image.name, digest: { sha256: hex(image.digest) } }],
    predicateType: "https://slsa.dev/provenance/v1",
    predicate: {
      buildDefinition: {
        buildType: "https://github.com/platform-operator/platform-operator/image@v1",
        externalParameters: { command: inputs.command, source: { digest: { gitCommit: inputs.commit } } },
        internalParameters: { nodeVersion: inputs.node.version, helmVersion: inputs.helm.version },
        resolvedDependencies: [
          { uri: "git+source", digest: { gitCommit: inputs.commit } },
          {
            uri: `pkg:generic/node@${inputs.node.version}`,
            digest: { sha256: sha256File(inputs.node.path) },
          },
          {
            uri: `pkg:golang/helm.sh/helm/v3@${inputs.helm.version}`,
            digest: { sha256: sha256File(inputs.helm.path) },
          },
          ...Object.entries(inputs.files).map(([name, path]) => ({
            name,
            digest: { sha256: sha256File(path) },
          })),
          ...inputs.debian.map((d) => ({
            uri: `pkg:deb/debian/${d.name}@${encodeURIComponent(d.version)}?arch=${d.architecture}`,
          })),
        ],
      },
      runDetails: {
        builder: { id: "https://github.com/platform-operator/platform-operator/npm-run-image" },
        metadata: {
          invocationId: randomUUID(),
          startedOn: wholeSeconds(startedOn),
          finishedOn: wholeSeconds(new Date()),
        },
      },
    },
  };
}

/**
 * Attaches a document to the image in an OCI layout as a referrer: an artifact manifest with the
 * document as its one layer and the image manifest as its subject, listed in index.json.
 */
export function attachReferrer(
  layout: string,
  subject: Descriptor,
  artifactType: string,
  document: unknown,
): Descriptor {
  const layer = writeBlob(layout, artifactType, Buffer.from(JSON.stringify(document)));
  const config = writeBlob(layout, EMPTY_CONFIG, Buffer.from("{}"));
  const manifest = writeBlob(
    layout,
    OCI_MANIFEST,
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        artifactType,
        config,
        layers: [layer],
        subject: { mediaType: subject.mediaType, digest: subject.digest, size: subject.size },
      }),
    ),
  );
  const indexPath = join(layout, "index.json");
  const index = JSON.parse(readFileSync(indexPath, "utf8")) as { manifests: Descriptor[] };
  index.manifests.push({ ...manifest, artifactType });
  writeFileSync(indexPath, JSON.stringify(index));
  return manifest;
}
