import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const main = join(root, "dist/src/cli/main.js");
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, [main, ...args], { input, encoding: "utf8", cwd: root, timeout: 30_000 });

describe("platform-operator CLI", () => {
  it("validate: one line per problem naming file:line, document, object and key, exit 1", () => {
    const r = cli(["validate", "test/fixtures/manifests/bad.yaml"]);
    assert.equal(r.status, 1);
    const lines = r.stdout.trim().split("\n");
    const has = (re: RegExp) =>
      assert.ok(
        lines.some((l) => re.test(l)),
        `no line matches ${re}:\n${r.stdout}`,
      );
    has(/^test\/fixtures\/manifests\/bad\.yaml:1: document 1: ns\/one: a: .*random/);
    has(/^test\/fixtures\/manifests\/bad\.yaml:1: document 1: ns\/one: hash: .*missing\.key/);
    has(/bad\.yaml:1: document 1: ns\/one: .*dotted\.key.*dot/);
    has(/bad\.yaml:1: document 1: ns\/one: .*nope/);
    has(/bad\.yaml:12: document 2: ns\/two: .*secret\/apps\/one .*ns\/one \(.*bad\.yaml:1\)/);
    // The two objects of one name are told apart by their lines.
    has(
      /bad\.yaml:19: document 3: ns\/three: the name ns\/three is also declared in ns\/three \(.*bad\.yaml:27\)/,
    );
    has(
      /bad\.yaml:27: document 4: ns\/three: the name ns\/three is also declared in ns\/three \(.*bad\.yaml:19\)/,
    );
    // ns/three has a problem of its own (e) and is still part of the cycle reported in this pass.
    has(/bad\.yaml:19: document 3: ns\/three: e: hex length/);
    has(/bad\.yaml:12: document 2: ns\/two: b: reference cycle/);
    has(/bad\.yaml:19: document 3: ns\/three: c: reference cycle/);
    assert.ok(!r.stdout.includes("ignored"), "other kinds are not checked");
    assert.match(r.stderr, /^11 problem\(s\) in 5 document\(s\)\n$/);
  });

  it("validate: with no arguments it is a usage error, not an empty pass", () => {
    const r = cli(["validate"], "");
    assert.equal(r.status, 2);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      /^platform-operator: validate: name the manifests to check: .*- for standard input/,
    );
  });

  it("validate: a YAML syntax error shows the parser's whole message, and other documents are still checked", () => {
    const r = cli(["validate", "test/fixtures/manifests/broken.yaml"]);
    assert.equal(r.status, 1);
    const out = r.stdout;
    assert.match(out, /broken\.yaml:13: document 2: YAML syntax error: .*at line 13, column 14:\n/);
    // The picture of the line with its marker is part of the message.
    assert.match(out, /\n {4} {2}data: \{ a: b: c \}\n {4} +\^+\n/);
    assert.match(out, /broken\.yaml:1: document 1: ns\/fine-but-wrong: a: uuid takes no argument/);
  });

  it("validate: one broken or missing file does not hide the problems of the others", () => {
    const r = cli([
      "validate",
      "does/not/exist.yaml",
      "test/fixtures/manifests/broken.yaml",
      "test/fixtures/manifests/bad.yaml",
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /^does\/not\/exist\.yaml: no such file or folder$/m);
    assert.match(r.stdout, /broken\.yaml:13: document 2: YAML syntax error/);
    assert.match(r.stdout, /broken\.yaml:1: document 1: ns\/fine-but-wrong/);
    assert.match(r.stdout, /bad\.yaml:1: document 1: ns\/one: a: /);
    assert.match(r.stdout, /bad\.yaml:19: document 3: ns\/three: c: reference cycle/);
    assert.match(r.stderr, /^14 problem\(s\) in 6 document\(s\)\n$/);
  });

  it("validate: reads stdin and folders, exit 0 on the samples", () => {
    const sample = readFileSync(join(root, "deploy/samples/vaultseed.yaml"), "utf8");
    const r = cli(["validate", "-"], sample);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^\d+ document\(s\) checked, no problems\n$/);
    assert.equal(cli(["validate", "deploy/samples"]).status, 0);
    const empty = cli(["validate", "-"], "");
    assert.equal(empty.status, 1, "checking nothing does not pass");
    assert.match(empty.stdout, /^<stdin>: no YAML or JSON documents found\n$/);
    const piped = cli(["validate", "-"], "a: b: c\n");
    assert.equal(piped.status, 1);
    assert.match(piped.stdout, /^<stdin>:1: document 1: YAML syntax error: /);
  });

  it("validate --config: an application namespace's VaultSeed outside its prefixes is a problem", () => {
    const dir = makeTempDir("cli-apps");
    const config = join(dir, "operator.yaml");
    writeFileSync(
      config,
      `targets:
  vault:
    namespaces: [platform]
    applications:
      team-a: { write: [apps/team-a/], read: [shared/team-a/] }
    backend: { address: "http://127.0.0.1:1", allowHttp: true, auth: { developmentToken: x } }
`,
    );
    const seed = (ns: string, name: string, path: string, data: string) =>
      `apiVersion: ohmlab.fr/v1alpha1
kind: VaultSeed
metadata: { name: ${name}, namespace: ${ns} }
spec:
  path: ${path}
  data: ${data}
`;
    const manifests = join(dir, "seeds.yaml");
    writeFileSync(
      manifests,
      [
        seed("team-a", "ok", "apps/team-a/db", '{ a: "<random:8>", b: "<ref:shared/team-a/x#k>" }'),
        seed("team-a", "escapes", "apps/team-b/db", '{ a: "<random:8>" }'),
        seed("team-a", "peeks", "apps/team-a/web", '{ a: "<ref:platform/root#token>" }'),
        seed("platform", "free", "platform/anything", '{ a: "<random:8>" }'),
      ].join("---\n"),
    );
    const r = cli(["validate", "--config", config, manifests]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines.length, 2, r.stdout);
    assert.match(lines[0]!, /document 2: .*escapes: spec\.path: .*may seed only under apps\/team-a\//);
    assert.match(lines[1]!, /document 3: .*peeks: a: .*may read only under apps\/team-a\/, shared\/team-a\//);
    // Without the configuration nothing says which namespaces are limited: the same files pass.
    assert.equal(cli(["validate", manifests]).status, 0);
  });

  it("validate: items of a List (kubectl get -o yaml) are named by their own line", () => {
    const list = [
      "apiVersion: v1",
      "kind: List",
      "items:",
      "  - apiVersion: ohmlab.fr/v1alpha1",
      "    kind: VaultSeed",
      "    metadata: { name: good, namespace: ns }",
      '    spec: { path: secret/a/good, data: { a: "<uuid>" } }',
      "  - apiVersion: ohmlab.fr/v1alpha1",
      "    kind: VaultSeed",
      "    metadata: { name: bad, namespace: ns }",
      '    spec: { path: secret/a/bad, data: { a: "<random:0>" } }',
      "",
    ].join("\n");
    const r = cli(["validate", "-"], list);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "<stdin>:8: document 1: ns/bad: a: random length must be between 1 and 4096\n");
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
    const { writeFileSync } = await import("node:fs");
    const dir = makeTempDir("cli-test");
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
        `targets:\n  vault:\n    backend:\n      address: http://127.0.0.1:1\n      auth: { token: "\${NOT_SET_ANYWHERE}" }\n`,
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
