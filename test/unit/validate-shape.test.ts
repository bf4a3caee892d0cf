import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { kindFor } from "../../src/apis/index.js";
import { documentShape } from "../../src/apis/object-check.js";
import { structuralErrors } from "../../src/apis/structural.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const main = join(root, "dist/src/cli/main.js");
const cli = (args: string[], input?: string) =>
  spawnSync(process.execPath, [main, ...args], { input, encoding: "utf8", cwd: root, timeout: 120_000 });

const seed = (spec: unknown, metadata: unknown = { name: "a", namespace: "ns" }) => ({
  apiVersion: "ohmlab.fr/v1alpha1",
  kind: "VaultSeed",
  metadata,
  spec,
});

describe("validate: what is not a valid object is refused", () => {
  it("binary garbage is a problem, not an empty pass", () => {
    const dir = makeTempDir("validate-shape-");
    const file = join(dir, "garbage.yaml");
    // Bytes that are not UTF-8 (0xff never is), whatever the random rest turns out to be.
    writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), randomBytes(256)]));
    const r = cli(["validate", file]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /garbage\.yaml: is not a text file \(binary content\)/);
    const piped = cli(["validate", "-"], "kind: VaultSeed\u0000\n");
    assert.equal(piped.status, 1);
    assert.match(piped.stdout, /^<stdin>: is not text/);
  });

  it("a YAML list, a scalar and a mapping without apiVersion or kind are not objects", () => {
    const r = cli(["validate", "-"], "- a\n- b\n---\njust words\n---\nfoo: bar\n");
    assert.equal(r.status, 1, r.stdout + r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.match(lines[0]!, /^<stdin>:1: document 1: is not a Kubernetes object: a list/);
    assert.match(lines[1]!, /document 2: is not a Kubernetes object: the string "just words"/);
    assert.match(lines[2]!, /document 3: apiVersion: is missing/);
    assert.match(lines[3]!, /document 3: kind: is missing/);
    assert.equal(lines.length, 4);
  });

  it("kind: VaultSeed without apiVersion or metadata names both", () => {
    const r = cli(["validate", "-"], 'kind: VaultSeed\nspec: {path: a/b, data: {x: "<random:16>"}}\n');
    assert.equal(r.status, 1);
    assert.match(r.stdout, /apiVersion: is missing: a VaultSeed has apiVersion ohmlab\.fr\/v1alpha1/);
    assert.match(r.stdout, /metadata: is missing/);
  });

  it("an unknown spec field and rotate.keys of the wrong type show in one run, with the other errors", () => {
    const doc = [
      "apiVersion: ohmlab.fr/v1alpha1",
      "kind: VaultSeed",
      "metadata: {name: a, namespace: ns}",
      "spec:",
      "  path: apps/a",
      "  bogus: 1",
      '  data: {x: "<random:16>", y: "<bcrypt:nope>"}',
      '  rotate: {keys: "a", token: "t"}',
    ].join("\n");
    const r = cli(["validate", "-"], doc);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /ns\/a: spec\.bogus: unknown field/);
    assert.match(r.stdout, /spec\.rotate\.keys/);
    assert.match(r.stdout, /y: bcrypt target nope is not declared/);
    // The schema check and the target's check of rotate.keys are one problem, not two.
    assert.equal(r.stdout.match(/rotate\.keys/g)?.length, 1, r.stdout);
  });

  it("10,000 keys in one path are a warning (OpenBao's request string limit), and exit 0", () => {
    const data: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++) data[`k${i}`] = "<random:8>";
    const r = cli(["validate", "-"], JSON.stringify(seed({ path: "apps/big", data })));
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ns\/a: spec\.data: warning: one write of this path carries 20003 strings/);
    assert.match(r.stderr, /no problems, 1 warning\(s\)/);
  });

  it("objects of other kinds are not looked into", () => {
    const r = cli(["validate", "-"], "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nextra: 1\n");
    assert.equal(r.status, 0, r.stdout);
  });
});

describe("structural schema check", () => {
  const kind = kindFor("VaultSeed")!;

  it("a valid object has no problems", () => {
    assert.deepEqual(documentShape(seed({ path: "a/b", data: { x: "1" } })).errors, []);
  });

  it("reports every problem with its field: types, bounds, patterns, enums, required, unknown", () => {
    const errors = documentShape({
      ...seed(
        {
          path: "/bad",
          data: [],
          prune: "yes",
          deletionPolicy: "Keep",
          rotate: { every: "1d", keys: ["", 3], token: "" },
          extra: true,
        },
        { name: "Bad_Name", namespace: "ns", labels: { a: 1 }, bogus: 1 },
      ),
      top: 1,
    }).errors;
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e.message]));
    assert.match(byPath["top"]!, /unknown field/);
    assert.match(byPath["metadata.bogus"]!, /ObjectMeta has no such field/);
    assert.match(byPath["metadata.name"]!, /DNS subdomain/);
    assert.match(byPath["metadata.labels.a"]!, /must be a string, not integer/);
    assert.match(byPath["spec.path"]!, /must match the pattern/);
    assert.equal(byPath["spec.data"], "must be of type object, not array");
    assert.equal(byPath["spec.prune"], "must be of type boolean, not string");
    assert.equal(byPath["spec.deletionPolicy"], 'must be one of: "Retain", "Delete"');
    assert.match(byPath["spec.rotate.every"]!, /must match the pattern/);
    assert.match(byPath["spec.rotate.keys[0]"]!, /at least 1 characters/);
    assert.equal(byPath["spec.rotate.keys[1]"], "must be of type string, not integer");
    assert.match(byPath["spec.rotate.token"]!, /at least 1 characters/);
    assert.match(byPath["spec.extra"]!, /unknown field/);
  });

  it("a free-form map (preserve-unknown-fields) keeps whatever it holds", () => {
    assert.deepEqual(
      documentShape(seed({ path: "a/b", data: { deep: { any: [1, { x: null }] } } })).errors,
      [],
    );
  });

  it("required fields and a wrong apiVersion of our group", () => {
    const errors = documentShape({
      apiVersion: "ohmlab.fr/v9",
      kind: "VaultSeed",
      metadata: { name: "a" },
      spec: {},
    }).errors;
    assert.deepEqual(
      errors.map((e) => e.path),
      ["apiVersion", "spec.data", "spec.path"],
    );
  });

  it("a required field with a default is filled by the API server first: upstream's empty references pass", () => {
    // Upstream writes Secret references as corev1.LocalObjectReference: `name` defaults to "".
    const spec = {
      version: "2.7.2",
      replicas: 3,
      storage: { size: "1Gi" },
      imagePullSecrets: [{}],
      unseal: {
        type: "transit",
        transit: { address: "https://bao.example.org:8200", keyName: "k", mountPath: "transit" },
        credentialsSecretRef: {},
      },
      backup: {
        schedule: "0 * * * *",
        tokenSecretRef: {},
        target: { endpoint: "https://s3.example.org", bucket: "b", credentialsSecretRef: {} },
      },
      upgrade: { tokenSecretRef: {} },
    };
    const doc = { apiVersion: "openbao.org/v1alpha1", kind: "OpenBaoCluster", metadata: { name: "e" }, spec };
    assert.deepEqual(documentShape(doc).errors, []);
    // A required field without a default is still missing.
    const { storage: _storage, ...withoutStorage } = spec;
    assert.deepEqual(
      documentShape({ ...doc, spec: withoutStorage }).errors.map((e) => e.path),
      ["spec.storage"],
    );
  });

  it("a kind of the same name in another group is not ours", () => {
    assert.deepEqual(
      documentShape({ apiVersion: "other.io/v1", kind: "VaultSeed", metadata: {} }).errors,
      [],
    );
  });

  it("lists of type map refuse two entries with one key", () => {
    const errors = structuralErrors(
      {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        items: { type: "object", properties: { type: { type: "string" } } },
      },
      [{ type: "a" }, { type: "a" }],
      "status.conditions",
    );
    assert.deepEqual(errors, [{ path: "status.conditions[1]", message: 'duplicate entry for type ["a"]' }]);
    assert.ok(kind.crd.spec.versions[0]!.schema.openAPIV3Schema.properties?.["spec"]);
  });
});
