import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type ImageSpec, imageKey, writeDockerArchive } from "../../src/testenv/node/images/archive.js";
import { TarWriter } from "../../src/testenv/node/images/tar.js";

// The image writer is checked against GNU tar, an independent reader of the same format.

const dir = mkdtempSync(join(tmpdir(), "node-images-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("image tarballs", () => {
  it("writes files, directories, symlinks, owners, modes and long names that tar reads back", () => {
    const source = join(dir, "payload");
    writeFileSync(source, "x".repeat(1000));
    const longName = `deep/${"segment-".repeat(20)}file.js`;
    const path = join(dir, "t.tar");
    const w = new TarWriter(path);
    w.add({ type: "dir", path: "/tmp", mode: 0o1777 });
    w.add({
      type: "file",
      path: "/etc/passwd",
      mode: 0o644,
      data: Buffer.from("root:x:0:0::/root:/bin/sh\n"),
    });
    w.add({ type: "file", path: "/bin/tool", mode: 0o755, uid: 100, gid: 1000, source, size: 1000 });
    w.add({ type: "symlink", path: "/bin/sh", target: "busybox" });
    w.add({ type: "file", path: longName, mode: 0o644, data: Buffer.from("long") });
    const { sha256, size } = w.finish();
    assert.equal(size, readFileSync(path).length);
    assert.equal(size % 512, 0);
    assert.equal(sha256, execFileSync("sha256sum", [path], { encoding: "utf8" }).split(" ")[0]);

    const listing = execFileSync("tar", ["-tvf", path, "--numeric-owner"], { encoding: "utf8" });
    assert.match(listing, /^drwxrwxrwt 0\/0 .* tmp\/$/m);
    assert.match(listing, /^-rwxr-xr-x 100\/1000 +1000 .* bin\/tool$/m);
    assert.match(listing, /^lrwxrwxrwx 0\/0 .* bin\/sh -> busybox$/m);
    assert.ok(listing.includes(longName), "a name over 100 bytes survives through a PAX header");
    assert.equal(execFileSync("tar", ["-xOf", path, longName], { encoding: "utf8" }), "long");
  });

  it("writes a docker archive whose manifest, config and layer digests agree", () => {
    const spec: ImageSpec = {
      name: "t",
      tags: ["example.test/t:1", "example.test/t:2"],
      layers: [[{ type: "file", path: "/hello", mode: 0o644, data: Buffer.from("hi") }]],
      config: { Entrypoint: ["/bin/sh"], User: "65532:65532" },
    };
    const out = join(dir, "image.tar");
    const layers = join(dir, "layers");
    execFileSync("mkdir", ["-p", layers]);
    writeDockerArchive(spec, out, layers);
    const manifest = JSON.parse(execFileSync("tar", ["-xOf", out, "manifest.json"], { encoding: "utf8" }));
    assert.deepEqual(manifest[0].RepoTags, spec.tags);
    const config = JSON.parse(execFileSync("tar", ["-xOf", out, manifest[0].Config], { encoding: "utf8" }));
    assert.deepEqual(config.config, spec.config);
    const layer = execFileSync("tar", ["-xOf", out, manifest[0].Layers[0]]);
    const digest = execFileSync("sha256sum", [], { input: layer, encoding: "utf8" }).split(" ")[0];
    assert.equal(config.rootfs.diff_ids[0], `sha256:${digest}`);
    assert.equal(manifest[0].Layers[0], `${digest}/layer.tar`);
  });

  it("keys an image by its content: equal inputs, equal key; one byte changed, another key", () => {
    const spec = (text: string): ImageSpec => ({
      name: "k",
      tags: ["example.test/k:1"],
      layers: [[{ type: "file", path: "/a", mode: 0o644, data: Buffer.from(text) }]],
      config: {},
    });
    assert.equal(imageKey(spec("one")), imageKey(spec("one")));
    assert.notEqual(imageKey(spec("one")), imageKey(spec("onE")));
  });
});
