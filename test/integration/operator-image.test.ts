import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { runCommand } from "../../src/testenv/exec.js";
import { type WrittenImage, writeOperatorImage } from "../../src/testenv/image.js";
import { repoRoot } from "../../src/testenv/paths.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

// What `npm run image` writes, read back from the OCI layout the way a registry or a scanner reads it:
// a distroless root (no shell, no package manager), the non-root user, Node and its libraries,
// production modules only, helm and the charts; the docker archive is the same image.

interface Manifest {
  config: { digest: string };
  layers: { digest: string; mediaType: string }[];
}

describe("the operator image (npm run image)", () => {
  let image: WrittenImage;
  let files: Map<string, string>;
  const blob = (digest: string) => join(image.layout, "blobs", "sha256", digest.replace(/^sha256:/, ""));

  before(async () => {
    image = await writeOperatorImage(makeTempDir("operator-image"), () => {});
    const manifest = JSON.parse(readFileSync(blob(image.digest), "utf8")) as Manifest;
    files = new Map();
    for (const layer of manifest.layers) {
      assert.equal(layer.mediaType, "application/vnd.oci.image.layer.v1.tar");
      const { stdout } = await runCommand("tar", ["-tvf", blob(layer.digest)]);
      for (const line of stdout.split("\n").filter(Boolean)) {
        const m = /^(\S)\S*\s+\S+\s+\d+\s+\S+\s+\S+\s+(.*?)(?: -> .*)?$/.exec(line);
        if (m) files.set(`/${m[2]!.replace(/\/$/, "")}`, m[1]!);
      }
    }
  });

  it("has no shell, no package manager and no programs besides node and helm", () => {
    const programs = [...files]
      .filter(([p, t]) => t !== "d" && /^\/(usr\/(local\/)?)?s?bin\//.test(p))
      .map(([p]) => p);
    assert.deepEqual(programs.sort(), ["/usr/local/bin/helm", "/usr/local/bin/node"]);
    for (const name of ["sh", "bash", "dash", "ash", "busybox", "apt", "apt-get", "dpkg", "env"])
      assert.ok(
        ![...files].some(([p, t]) => t !== "d" && p.endsWith(`/${name}`)),
        `no program ${name} anywhere in the image`,
      );
  });

  it("runs as nonroot 65532 with Node's libraries, CA certificates and time zones from Debian packages", async () => {
    const index = JSON.parse(readFileSync(join(image.layout, "index.json"), "utf8")) as {
      manifests: { digest: string }[];
    };
    assert.equal(index.manifests[0]!.digest, image.digest);
    const manifest = JSON.parse(readFileSync(blob(image.digest), "utf8")) as Manifest;
    const config = JSON.parse(readFileSync(blob(manifest.config.digest), "utf8")) as {
      config: { User: string; Entrypoint: string[] };
    };
    assert.equal(config.config.User, "65532:65532");
    const passwd = (await runCommand("tar", ["-xOf", blob(manifest.layers[0]!.digest), "etc/passwd"])).stdout;
    assert.match(passwd, /^nonroot:x:65532:65532:nonroot:\/home\/nonroot:\/sbin\/nologin$/m);
    assert.deepEqual(config.config.Entrypoint, ["/usr/local/bin/node", "/app/dist/src/cli/main.js"]);
    for (const path of [
      "/etc/passwd",
      "/etc/ssl/certs/ca-certificates.crt",
      "/usr/share/zoneinfo/UTC",
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib64/ld-linux-x86-64.so.2",
      "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
      "/lib/x86_64-linux-gnu/libgcc_s.so.1",
      "/var/lib/dpkg/status.d/libc6",
      "/usr/share/doc/libc6/copyright",
      "/app/dist/src/cli/main.js",
      "/app/node_modules/yaml/package.json",
      "/home/nonroot",
      "/tmp",
    ])
      assert.ok(files.has(path), `${path} is in the image`);
    for (const dev of ["typescript", "@biomejs", "fast-check", "azurite"])
      assert.ok(!files.has(`/app/node_modules/${dev}`), `dev dependency ${dev} is not shipped`);
    assert.ok(
      [...files.keys()].some((p) => /^\/app\/charts\/gitlab-.*\.tgz$/.test(p)),
      "bundled charts",
    );
    // The docker archive carries the same config, so `docker load` gives the same image ID.
    const { stdout } = await runCommand("tar", ["-xOf", image.archive, "manifest.json"]);
    const docker = JSON.parse(stdout) as { Config: string }[];
    assert.equal(`sha256:${docker[0]!.Config.replace(/\.json$/, "")}`, manifest.config.digest);
  });

  it("carries its SBOM and SLSA provenance as referrers of the image manifest", async () => {
    const index = JSON.parse(readFileSync(join(image.layout, "index.json"), "utf8")) as {
      manifests: { digest: string; artifactType?: string }[];
    };
    const doc = (digest: string) => {
      const m = JSON.parse(readFileSync(blob(digest), "utf8")) as Manifest & { subject: { digest: string } };
      assert.equal(m.subject.digest, image.digest, "attached to this image");
      return JSON.parse(readFileSync(blob(m.layers[0]!.digest), "utf8")) as Record<string, unknown>;
    };
    assert.deepEqual(
      index.manifests.map((m) => m.artifactType ?? "image"),
      ["image", "application/vnd.cyclonedx+json", "application/vnd.in-toto+json"],
    );
    const sbom = doc(image.sbom) as {
      bomFormat: string;
      components: { name: string; version: string; purl: string; components?: { purl: string }[] }[];
      dependencies: { ref: string; dependsOn: string[] }[];
    };
    assert.equal(sbom.bomFormat, "CycloneDX");
    const lock = JSON.parse(readFileSync(join(repoRoot(), "package-lock.json"), "utf8")) as {
      packages: Record<string, { version: string }>;
    };
    const yaml = sbom.components.find((c) => c.name === "yaml");
    assert.equal(yaml?.version, lock.packages["node_modules/yaml"]!.version);
    assert.ok(!sbom.components.some((c) => c.name === "typescript"), "no dev dependency in the SBOM");
    const helm = sbom.components.find((c) => c.name === "helm")!;
    assert.ok(
      helm.components?.some((m) => m.purl.startsWith("pkg:golang/github.com/Masterminds/semver/v3@")),
    );
    assert.ok(sbom.components.some((c) => c.purl.startsWith("pkg:deb/debian/libc6@")));
    assert.ok(
      sbom.dependencies
        .find((d) => d.ref === "pkg:npm/platform-operator@0.1.0")
        ?.dependsOn.includes(yaml!.purl),
    );

    const statement = doc(image.provenance) as {
      subject: { digest: { sha256: string } }[];
      predicateType: string;
      predicate: {
        buildDefinition: {
          externalParameters: { command: string; source: { digest: { gitCommit: string } } };
          resolvedDependencies: { name?: string; digest?: { sha256?: string } }[];
        };
      };
    };
    assert.equal(statement.predicateType, "https://slsa.dev/provenance/v1");
    assert.equal(`sha256:${statement.subject[0]!.digest.sha256}`, image.digest);
    const def = statement.predicate.buildDefinition;
    assert.equal(def.externalParameters.command, "npm run image");
    const head = (await runCommand("git", ["rev-parse", "HEAD"], { cwd: repoRoot() })).stdout.trim();
    assert.equal(def.externalParameters.source.digest.gitCommit, head);
    const lockDigest = createHash("sha256")
      .update(readFileSync(join(repoRoot(), "package-lock.json")))
      .digest("hex");
    assert.equal(
      def.resolvedDependencies.find((d) => d.name === "package-lock.json")?.digest?.sha256,
      lockDigest,
    );
  });
});
