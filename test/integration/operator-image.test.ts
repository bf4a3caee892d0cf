import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { runCommand } from "../../src/testenv/exec.js";
import { type WrittenImage, writeOperatorImage } from "../../src/testenv/image.js";
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
      assert.ok(![...files.keys()].some((p) => p.endsWith(`/${name}`)), `no ${name} anywhere in the image`);
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
});
