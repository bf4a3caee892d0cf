import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const main = join(root, "dist/src/cli/main.js");
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, [main, ...args], { input, encoding: "utf8", cwd: root, timeout: 30_000 });

describe("platform-operator CLI", () => {
  it("validate: one line per problem naming file, object and key, exit 1", () => {
    const r = cli(["validate", "test/fixtures/manifests/bad.yaml"]);
    assert.equal(r.status, 1);
    const lines = r.stdout.trim().split("\n");
    const has = (re: RegExp) =>
      assert.ok(
        lines.some((l) => re.test(l)),
        `no line matches ${re}:\n${r.stdout}`,
      );
    has(/bad\.yaml: ns\/one: a: .*random/);
    has(/bad\.yaml: ns\/one: hash: .*missing\.key/);
    has(/bad\.yaml: ns\/one: .*dotted\.key.*dot/);
    has(/bad\.yaml: ns\/one: .*nope/);
    has(/ns\/two: .*secret\/apps\/one/);
    has(/ns\/three: the name ns\/three is also declared/);
    has(/cycle/i);
    assert.ok(!r.stdout.includes("ignored"), "other kinds are not checked");
  });

  it("validate: reads stdin and folders, exit 0 on the samples", () => {
    const sample = readFileSync(join(root, "deploy/samples/vaultseed.yaml"), "utf8");
    const r = cli(["validate", "-"], sample);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, "");
    assert.equal(cli(["validate", "deploy/samples"]).status, 0);
  });

  it("validate: a missing file is one clear line and a non-zero exit", () => {
    const r = cli(["validate", "does/not/exist.yaml"]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /^platform-operator: does\/not\/exist\.yaml: no such file or folder\n$/);
  });

  it("crds prints exactly the checked-in CRDs", () => {
    const r = cli(["crds"]);
    assert.equal(r.status, 0);
    for (const f of readdirSync(join(root, "deploy/crds"))) {
      const body = readFileSync(join(root, "deploy/crds", f), "utf8")
        .replace(/^#.*\n/gm, "")
        .trim();
      assert.ok(r.stdout.includes(body.split("\n").slice(0, 8).join("\n")), `${f} is in the output`);
    }
  });

  it("run refuses unknown and reserved targets, and bad configuration, naming the field", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const dir = mkdtempSync(join((await import("node:os")).tmpdir(), "cli-test-"));
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    let r = cli(["run", "--config", write("a.yaml", "targets:\n  nosuch: {}\n")]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /target "nosuch": unknown target/);
    r = cli(["run", "--config", write("b.yaml", "targets:\n  harbor: {}\n")]);
    assert.match(r.stderr, /target "harbor": not implemented yet/);
    r = cli([
      "run",
      "--config",
      write("c.yaml", "targets:\n  vault:\n    backend:\n      address: ftp://x\n"),
    ]);
    assert.match(r.stderr, /targets\.vault\.backend\.address: must be an http\(s\) URL/);
    r = cli([
      "run",
      "--config",
      write(
        "d.yaml",
        'targets:\n  vault:\n    backend:\n      address: http://127.0.0.1:1\n      auth: { token: "${NOT_SET_ANYWHERE}" }\n',
      ),
    ]);
    assert.match(r.stderr, /\$\{NOT_SET_ANYWHERE\}: environment variable is not set/);
    assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
  });

  it("every command answers --help", () => {
    for (const c of ["run", "crds", "validate", "version", "dev"]) {
      const r = cli([c, "--help"]);
      assert.equal(r.status, 0, c);
      assert.match(r.stdout, /^Usage: platform-operator/);
    }
    assert.match(cli(["version"]).stdout, /^platform-operator \d+\.\d+\.\d+\n$/);
    assert.equal(cli(["bogus"]).status, 2);
  });
});
