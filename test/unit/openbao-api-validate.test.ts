import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { parseAllDocuments } from "yaml";
import { DURATION_PATTERN, OpenBaoGroup, QUANTITY_PATTERN, SEMVER_PATTERN } from "../../src/apis/index.js";
import type { ManifestDocument } from "../../src/runtime/target.js";
import { checkClusterSpec, requestPathProblem } from "../../src/targets/openbao/validate/cluster.js";
import { imageProblem, parseImage, tagVersion } from "../../src/targets/openbao/validate/image.js";
import { OPENBAO_GROUP, validateOpenBaoDocuments } from "../../src/targets/openbao/validate/index.js";
import { checkRestoreSpec } from "../../src/targets/openbao/validate/restore.js";
import * as values from "../../src/targets/openbao/validate/values.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const fixtures = join(root, "test", "fixtures", "openbao");
const main = join(root, "dist", "src", "cli", "main.js");

function documents(file: string): ManifestDocument[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((d, i) => ({
    file,
    document: i + 1,
    doc: d.toJS(),
  }));
}

const fields = (spec: unknown, name = "c") => checkClusterSpec(name, spec).map((p) => p.field);
const base = () => ({ version: "2.4.1", storage: { size: "10Gi" } });

describe("openbao validate: blue-green verification", () => {
  const withVerification = (verification: unknown) => ({
    ...base(),
    upgrade: { strategy: "BlueGreen", blueGreen: { verification } },
  });
  it("names a minSyncDuration the planner cannot read and a hook timeout below one second", () => {
    assert.deepEqual(
      fields(
        withVerification({ minSyncDuration: "30s", prePromotionHook: { image: "x:1", timeoutSeconds: 60 } }),
      ),
      [],
    );
    assert.deepEqual(fields(withVerification({ minSyncDuration: "1d" })), [
      "spec.upgrade.blueGreen.verification.minSyncDuration",
    ]);
    assert.deepEqual(fields(withVerification({ minSyncDuration: "soon" })), [
      "spec.upgrade.blueGreen.verification.minSyncDuration",
    ]);
    for (const t of [0, -5, 1.5, "60"])
      assert.deepEqual(fields(withVerification({ prePromotionHook: { image: "x:1", timeoutSeconds: t } })), [
        "spec.upgrade.blueGreen.verification.prePromotionHook.timeoutSeconds",
      ]);
  });
});

describe("openbao validate: values", () => {
  it("uses the schema's own patterns and group", () => {
    assert.equal(values.VERSION_PATTERN, SEMVER_PATTERN);
    assert.equal(values.QUANTITY_PATTERN, QUANTITY_PATTERN);
    assert.equal(values.DURATION_PATTERN, DURATION_PATTERN);
    assert.equal(OPENBAO_GROUP, OpenBaoGroup);
  });

  it("reads quantities as Kubernetes does", () => {
    assert.equal(values.parseQuantity("10Gi"), 10 * 2 ** 30);
    assert.equal(values.parseQuantity("1G"), 1e9);
    assert.equal(values.parseQuantity("1e3"), 1000);
    assert.equal(values.parseQuantity("500m"), 0.5);
    assert.equal(values.parseQuantity("0"), 0);
    assert.equal(values.parseQuantity("-1Gi"), -(2 ** 30));
    for (const bad of ["ten", "10 Gi", "10GB", "", "Gi"])
      assert.equal(values.parseQuantity(bad), undefined, bad);
  });

  it("parses image references: registry ports, digests, bad names", () => {
    assert.deepEqual(parseImage("localhost:5000/openbao/openbao:2.4.1"), {
      name: "localhost:5000/openbao/openbao",
      tag: "2.4.1",
    });
    const digest = `sha256:${"a".repeat(64)}`;
    assert.deepEqual(parseImage(`openbao/openbao@${digest}`), { name: "openbao/openbao", digest });
    for (const bad of [
      "Openbao/OpenBao:2.4.1",
      "openbao :2.4.1",
      "openbao@sha256:abc",
      "openbao:bad tag",
      "",
    ])
      assert.equal(typeof parseImage(bad), "string", bad);
    assert.deepEqual(tagVersion("2.4.1-ubi"), { major: 2, minor: 4, patch: 1, rest: "" });
    assert.deepEqual(tagVersion("v2.5.0-rc.1"), { major: 2, minor: 5, patch: 0, rest: "-rc.1" });
    assert.equal(tagVersion("latest"), undefined);
  });

  it("holds the image tag to spec.version, with or without a digest", () => {
    const digest = `sha256:${"b".repeat(64)}`;
    assert.equal(imageProblem("quay.io/openbao/openbao:2.4.1", "2.4.1"), undefined);
    assert.equal(imageProblem("quay.io/openbao/openbao:v2.4.1", "2.4.1"), undefined);
    assert.equal(imageProblem(`quay.io/openbao/openbao:2.4.1@${digest}`, "2.4.1"), undefined);
    assert.equal(imageProblem(`quay.io/openbao/openbao@${digest}`, "2.4.1"), undefined);
    assert.equal(imageProblem("registry.local/openbao:custom-build", "2.4.1"), undefined);
    assert.match(
      String(imageProblem(`quay.io/openbao/openbao:2.3.0@${digest}`, "2.4.1")),
      /2\.3\.0.*2\.4\.1/,
    );
    assert.match(String(imageProblem("openbao/openbao:2.5.0-rc.1", "2.5.0")), /another version/);
  });

  it("keeps self-init paths inside the API", () => {
    for (const ok of ["sys/auth/kubernetes", "auth/kubernetes/role/app", "secret/data/a..b"])
      assert.equal(requestPathProblem(ok), undefined, ok);
    for (const bad of [
      "",
      "/sys/auth",
      "sys/../etc",
      "..",
      "sys/./auth",
      "sys/%2e%2e/x",
      "sys/%2E./x",
      "sys\\..\\x",
      "sys/auth?x=1",
      "sys/auth kubernetes",
      "sys/auth\nkubernetes",
      3,
    ])
      assert.ok(requestPathProblem(bad), JSON.stringify(bad));
  });
});

describe("openbao validate: OpenBaoCluster", () => {
  it("finds nothing wrong in the upstream-style manifests and the sample", () => {
    const docs = [
      ...readdirSync(join(fixtures, "manifests")).flatMap((f) => documents(join(fixtures, "manifests", f))),
      ...documents(join(root, "deploy", "samples", "openbaocluster.yaml")),
    ];
    assert.ok(docs.length >= 7);
    assert.deepEqual(validateOpenBaoDocuments(docs), []);
  });

  it("names version, image and storage problems", () => {
    assert.deepEqual(fields({ storage: { size: "1Gi" } }), ["spec.version"]);
    assert.deepEqual(fields({ ...base(), version: "2.4" }), ["spec.version"]);
    assert.deepEqual(fields({ ...base(), image: "openbao/openbao:2.4.0" }), ["spec.image"]);
    assert.deepEqual(fields({ ...base(), backup: { image: "Bad Image" } }), ["spec.backup.image"]);
    assert.deepEqual(fields({ version: "2.4.1" }), ["spec.storage"]);
    assert.deepEqual(fields({ version: "2.4.1", storage: {} }), ["spec.storage.size"]);
    for (const size of ["0", "0Gi", "-5Gi", "500m", "big", 10])
      assert.deepEqual(fields({ version: "2.4.1", storage: { size } }), ["spec.storage.size"], String(size));
    assert.deepEqual(fields({ ...base(), readReplicas: { storage: { size: "0" } } }), [
      "spec.readReplicas.storage.size",
    ]);
  });

  it("checks the settings each TLS mode needs", () => {
    assert.deepEqual(fields({ ...base(), tls: { mode: "External" } }), []);
    assert.deepEqual(
      checkClusterSpec(undefined, { ...base(), tls: { mode: "External" } }).map((p) => p.field),
      ["spec.tls.caSecretName", "spec.tls.serverSecretName"],
    );
    assert.deepEqual(fields({ ...base(), tls: { mode: "External", caSecretName: "Bad_Name" } }), [
      "spec.tls.caSecretName",
    ]);
    assert.deepEqual(fields({ ...base(), tls: { mode: "External" } }, "x".repeat(250)), [
      "spec.tls.caSecretName",
      "spec.tls.serverSecretName",
    ]);
    assert.deepEqual(fields({ ...base(), tls: { mode: "ACME" } }), ["spec.tls.acme"]);
    assert.deepEqual(fields({ ...base(), tls: { mode: "ACME", acme: { domain: "bao.example.com" } } }), [
      "spec.tls.acme.directoryURL",
    ]);
    const url = "https://acme.example.com/directory";
    // Neither domain nor domains is upstream's default name (the ACME Service's), not a problem.
    assert.deepEqual(fields({ ...base(), tls: { mode: "ACME", acme: { directoryURL: url } } }), []);
    assert.deepEqual(
      fields({
        ...base(),
        tls: { mode: "ACME", acme: { directoryURL: url, domain: "a.b", domains: ["a.b"] } },
      }),
      ["spec.tls.acme"],
    );
    assert.deepEqual(
      fields({
        ...base(),
        tls: { mode: "ACME", acme: { directoryURL: url, domains: ["ok.example", "not a name"] } },
      }),
      ["spec.tls.acme.domains[1]"],
    );
    assert.deepEqual(fields({ ...base(), tls: { acme: { directoryURL: url, domain: "a.b" } } }), [
      "spec.tls.acme",
    ]);
    assert.deepEqual(fields({ ...base(), tls: { mode: "Manual" } }), ["spec.tls.mode"]);
    assert.deepEqual(fields({ ...base(), tls: { rotationPeriod: "a month" } }), ["spec.tls.rotationPeriod"]);
  });

  it("checks that the seal type and its block agree", () => {
    assert.deepEqual(fields({ ...base(), unseal: {} }), []);
    assert.deepEqual(fields({ ...base(), unseal: { type: "transit" } }), ["spec.unseal.transit"]);
    assert.deepEqual(fields({ ...base(), unseal: { type: "transit", transit: { address: "https://x" } } }), [
      "spec.unseal.transit.mountPath",
      "spec.unseal.transit.keyName",
    ]);
    assert.deepEqual(
      fields({ ...base(), unseal: { transit: { address: "a", mountPath: "m", keyName: "k" } } }),
      ["spec.unseal.transit"],
    );
    assert.deepEqual(
      fields({ ...base(), unseal: { type: "awskms", awskms: { region: "r", kmsKeyID: "k" }, static: {} } }),
      ["spec.unseal.static"],
    );
    assert.deepEqual(fields({ ...base(), unseal: { type: "vault" } }), ["spec.unseal.type"]);
    assert.deepEqual(fields({ ...base(), unseal: { type: "__proto__" } }), ["spec.unseal.type"]);
  });

  it("checks self-init requests: names, operations, paths, bodies", () => {
    const request = (r: Record<string, unknown>) => ({
      name: "a",
      operation: "update",
      path: "sys/auth/x",
      ...r,
    });
    const with_ = (...requests: unknown[]) => fields({ ...base(), selfInit: { enabled: true, requests } });
    assert.deepEqual(with_(request({})), []);
    assert.deepEqual(with_(request({ path: "../x" })), ["spec.selfInit.requests[0].path"]);
    assert.deepEqual(with_(request({ operation: "write" })), ["spec.selfInit.requests[0].operation"]);
    assert.deepEqual(with_(request({ data: "x" })), ["spec.selfInit.requests[0].data"]);
    assert.deepEqual(with_(request({ data: [1] })), ["spec.selfInit.requests[0].data"]);
    assert.deepEqual(with_(request({ name: "9lives" })), ["spec.selfInit.requests[0].name"]);
    assert.deepEqual(with_(request({}), request({})), ["spec.selfInit.requests[1].name"]);
    assert.deepEqual(with_("request"), ["spec.selfInit.requests[0]"]);
    assert.deepEqual(fields({ ...base(), selfInit: { requests: [request({})] } }), ["spec.selfInit.enabled"]);
  });

  it("checks restores: cluster, key, force", () => {
    const source = { key: "prod/ns/c/x.snap", target: { bucket: "b" } };
    assert.deepEqual(checkRestoreSpec({ cluster: "c", source }), []);
    assert.deepEqual(
      checkRestoreSpec({
        cluster: "C!",
        source: { ...source, key: "../x" },
        overrideOperationLock: true,
      }).map((p) => p.field),
      ["spec.cluster", "spec.source.key", "spec.overrideOperationLock"],
    );
    assert.deepEqual(
      checkRestoreSpec({ source: {} }).map((p) => p.field),
      ["spec.cluster", "spec.source.key", "spec.source.target"],
    );
  });

  it("takes upstream's credentialsSecretRef.namespace when it is the object's own, and names it otherwise", () => {
    const ref = { name: "creds", namespace: "team-a" };
    const spec = {
      ...base(),
      backup: { schedule: "0 3 * * *", target: { bucket: "b", credentialsSecretRef: ref } },
      unseal: { type: "transit", transit: {}, credentialsSecretRef: ref },
    };
    // Offline (no namespace) and in its own namespace: the reference reads the Secret where it is.
    assert.deepEqual(
      checkClusterSpec("c", spec).filter((p) => p.field.includes("credentials")),
      [],
    );
    assert.deepEqual(
      checkClusterSpec("c", spec, "team-a").filter((p) => p.field.includes("credentials")),
      [],
    );
    const elsewhere = checkClusterSpec("c", spec, "team-b").filter((p) => p.field.includes("credentials"));
    assert.deepEqual(
      elsewhere.map((p) => p.field),
      ["spec.backup.target.credentialsSecretRef.namespace", "spec.unseal.credentialsSecretRef.namespace"],
    );
    assert.match(elsewhere[0]!.message, /read from the object's own namespace "team-b" only/);
    const restore = {
      cluster: "c",
      source: { key: "k", target: { bucket: "b", credentialsSecretRef: ref } },
    };
    assert.deepEqual(checkRestoreSpec(restore, "team-a"), []);
    assert.deepEqual(
      checkRestoreSpec(restore, "team-b").map((p) => p.field),
      ["spec.source.target.credentialsSecretRef.namespace"],
    );
  });

  it("refuses a KMS seal whose plugin spec.plugins does not declare, naming unseal.kms.name", () => {
    const kms = { type: "kms", kms: { name: "awskms-plugin", region: "eu-west-1" } };
    const problems = checkClusterSpec("c", { ...base(), unseal: kms });
    assert.deepEqual(
      problems.map((p) => p.field),
      ["spec.unseal.kms.name"],
    );
    assert.match(problems[0]!.message, /spec\.plugins does not declare/);
    const plugin = { type: "kms", name: "awskms-plugin", command: "kms-awskms", version: "v0.1.0" };
    assert.deepEqual(checkClusterSpec("c", { ...base(), unseal: kms, plugins: [plugin] }), []);
    // A plugin of another type with the same name does not serve a seal.
    assert.deepEqual(fields({ ...base(), unseal: kms, plugins: [{ ...plugin, type: "secret" }] }), [
      "spec.unseal.kms.name",
    ]);
  });

  it("names repeated objects and objects without a name, and reads List items", () => {
    const cluster = (name?: string) => ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: name ? { name } : {},
      spec: base(),
    });
    const problems = validateOpenBaoDocuments([
      { file: "a.yaml", document: 1, line: 1, doc: cluster("x") },
      { file: "b.yaml", document: 1, line: 3, doc: { kind: "List", items: [cluster("x"), cluster()] } },
      { file: "c.yaml", document: 1, doc: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } } },
    ]);
    assert.deepEqual(
      problems.map((p) => `${p.file} ${p.object} ${p.key}: ${p.message}`),
      [
        "b.yaml OpenBaoCluster x metadata.name: is also used by the object at a.yaml:1",
        "b.yaml OpenBaoCluster (unnamed) metadata.name: is required",
      ],
    );
  });

  it("never throws and always names a spec field, whatever the document holds", () => {
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true, maxDepth: 6 }), (spec) => {
        for (const p of checkClusterSpec("c", spec)) assert.match(p.field, /^spec(\.|\[|$)/);
        for (const p of checkRestoreSpec(spec)) assert.match(p.field, /^spec(\.|\[|$)/);
      }),
      { numRuns: 500 },
    );
    // The same, with each part of a valid spec replaced by something random.
    const keys = [
      "version",
      "image",
      "storage",
      "tls",
      "unseal",
      "selfInit",
      "readReplicas",
      "plugins",
      "backup",
    ];
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.anything({ maxDepth: 4 }), (key, value) => {
        for (const p of checkClusterSpec("c", { ...base(), [key]: value })) assert.match(p.field, /^spec\./);
      }),
      { numRuns: 500 },
    );
  });
});

describe("openbao validate: the CLI", () => {
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [main, ...args], { encoding: "utf8", cwd: root, timeout: 60_000 });

  it("prints one line per problem, naming file:line, document, object and field, and exits 1", () => {
    const r = cli(["validate", "test/fixtures/openbao/invalid/clusters.yaml"]);
    assert.equal(r.status, 1, r.stderr);
    const lines = r.stdout.trim().split("\n");
    const prefix = "test/fixtures/openbao/invalid/clusters.yaml";
    assert.deepEqual(lines, [
      `${prefix}:2: document 1: OpenBaoCluster tag-mismatch: spec.image: tag 2.3.0 is another version than spec.version 2.4.1`,
      `${prefix}:2: document 1: OpenBaoCluster tag-mismatch: spec.storage.size: "0Gi" must be a positive size (at least one byte)`,
      `${prefix}:12: document 2: OpenBaoCluster acme-bad-values: spec.version: "latest" is not a semantic version such as 2.4.1`,
      `${prefix}:12: document 2: OpenBaoCluster acme-bad-values: spec.storage.size: "ten" is not a quantity such as 10Gi`,
      `${prefix}:12: document 2: OpenBaoCluster acme-bad-values: spec.tls.acme.directoryURL: "acme.example.com/directory" is not an http(s) URL`,
      `${prefix}:26: document 3: OpenBaoCluster seal-mixup: spec.unseal.transit: is required with unseal.type transit`,
      `${prefix}:26: document 3: OpenBaoCluster seal-mixup: spec.unseal.awskms: belongs to unseal.type awskms, but unseal.type is transit`,
      `${prefix}:40: document 4: OpenBaoCluster bad-requests: spec.selfInit.requests[0].path: "sys/../../etc/passwd" must not contain . or .. segments`,
      `${prefix}:40: document 4: OpenBaoCluster bad-requests: spec.selfInit.requests[1].operation: "write" is not one of create, read, update, delete, list, patch`,
      `${prefix}:40: document 4: OpenBaoCluster bad-requests: spec.selfInit.requests[1].path: "/sys/auth/kubernetes" must not start with / (it is relative to /v1/)`,
      `${prefix}:40: document 4: OpenBaoCluster bad-requests: spec.selfInit.requests[2].data: must be an object (the request body), not a list or a single value`,
    ]);
    assert.match(r.stderr, /11 problem\(s\) in 4 document\(s\)/);
  });

  it("passes the upstream-style manifests together with the other kinds' samples, exit 0", () => {
    const r = cli(["validate", "test/fixtures/openbao/manifests", "deploy/samples"]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /no problems/);
  });
});
