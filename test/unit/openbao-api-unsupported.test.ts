import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { parse } from "yaml";
import { crdFor, type JSONSchemaProps, OpenBaoClusterSchema, withDefaults } from "../../src/apis/index.js";
import { FIELD_SUPPORT, supportOf, unsupportedFields } from "../../src/targets/openbao/unsupported.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const manifestDir = join(repoRoot, "test", "fixtures", "openbao", "manifests");

/** A manifest's spec as the API server stores it: with the schema's defaults filled in. */
function storedSpec(file: string): unknown {
  const doc = parse(readFileSync(join(manifestDir, file), "utf8"));
  return withDefaults(OpenBaoClusterSchema, doc).spec;
}

const withDefaultsOf = (spec: Record<string, unknown>) =>
  withDefaults(OpenBaoClusterSchema, {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "x" },
    spec: { version: "2.4.1", storage: { size: "1Gi" }, ...spec },
  }).spec;

/** Every property path under spec in the generated CRD, lists as `[]`. */
function schemaPaths(node: JSONSchemaProps, path = ""): string[] {
  const out: string[] = [];
  for (const [k, child] of Object.entries(node.properties ?? {})) {
    const p = path === "" ? k : `${path}.${k}`;
    out.push(p, ...schemaPaths(child, p));
  }
  if (node.items) out.push(...schemaPaths(node.items, `${path}[]`));
  return out;
}

describe("OpenBaoCluster fields accepted but not acted on", () => {
  const specSchema = crdFor("OpenBaoCluster").spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;

  it("decides every field of the schema, so a new field cannot go unclassified", () => {
    const undecided = schemaPaths(specSchema).filter((p) => supportOf(p) === undefined);
    assert.deepEqual(undecided, []);
  });

  it("lists only paths the schema has", () => {
    const paths = new Set(schemaPaths(specSchema));
    assert.deepEqual(
      Object.keys(FIELD_SUPPORT).filter((p) => !paths.has(p)),
      [],
    );
  });

  it("finds nothing in the minimal, ACME and self-init manifests beyond what they really ask", () => {
    assert.deepEqual(unsupportedFields(storedSpec("minimal.yaml")), []);
    assert.deepEqual(unsupportedFields(storedSpec("acme.yaml")), []);
    // selfInit.oidc's JWT bootstrap is built (workload/config/oidc-bootstrap.ts).
    assert.deepEqual(unsupportedFields(storedSpec("self-init.yaml")), []);
  });

  it("names nothing of the hardened manifest: metrics, serviceAccount and the pod security context are built", () => {
    assert.deepEqual(unsupportedFields(storedSpec("hardened-external-tls.yaml")), []);
  });

  it("names nothing of backups, both upgrade strategies and the pre-promotion hook (all built)", () => {
    assert.deepEqual(unsupportedFields(storedSpec("backup-bluegreen.yaml")), []);
    // Web and workload identity are built too (the Job's projected token, the SA's annotations).
    assert.deepEqual(
      unsupportedFields({
        backup: {
          schedule: "@daily",
          target: {
            bucket: "b",
            roleArn: "arn:aws:iam::1:role/r",
            workloadIdentity: { serviceAccountAnnotations: { "eks.amazonaws.com/role-arn": "r" } },
          },
        },
      }),
      [],
    );
    assert.deepEqual(unsupportedFields({ restore: { jwtAuthRole: "restore" } }), []);
  });

  it("does not count defaults, switched-off flags or empty blocks as asking", () => {
    const quiet = withDefaultsOf({
      initContainer: {},
      observability: { metrics: { enabled: false, serviceMonitor: {} } },
      upgrade: { strategy: "RollingUpdate" },
      workloadHardening: { appArmorEnabled: false },
      maintenance: {},
      securityContext: {},
    });
    assert.deepEqual(unsupportedFields(quiet), []);
    const asking = withDefaultsOf({
      initContainer: { image: "busybox:1.36" },
      observability: { metrics: { enabled: true } },
      upgrade: { strategy: "BlueGreen" },
      maintenance: { restartAt: "2026-11-30T08:00:00Z" },
    });
    // maintenance (its mark, and restartAt mapped to runtime.restartAt) is acted on since.
    assert.deepEqual(unsupportedFields(asking), ["spec.initContainer"]);
  });

  it("names a top-level field it does not know", () => {
    assert.deepEqual(unsupportedFields({ version: "2.4.1", futureFeature: { on: true } }), [
      "spec.futureFeature",
    ]);
  });

  it("keeps free-form parts free: self-init data and audit options are passed to OpenBao", () => {
    assert.deepEqual(
      unsupportedFields({
        selfInit: {
          enabled: true,
          requests: [{ name: "a", operation: "update", path: "x", data: { anything: 1 } }],
        },
        audit: [{ type: "file", path: "f", options: { whatever: "x" } }],
      }),
      [],
    );
  });

  it("survives hostile input: not an object, deep nesting, prototype keys", () => {
    for (const bad of [undefined, null, 3, "spec", [], [{ backup: {} }]])
      assert.deepEqual(unsupportedFields(bad), []);
    let deep: Record<string, unknown> = { x: 1 };
    for (let i = 0; i < 100_000; i++) deep = { nested: deep };
    assert.deepEqual(unsupportedFields({ unknownField: deep }), ["spec.unknownField"]);
    assert.deepEqual(unsupportedFields({ tls: deep }), []);
    const proto = JSON.parse('{"__proto__": {"backup": 1}, "constructor": {"x": 1}}');
    assert.deepEqual(unsupportedFields(proto), ["spec.__proto__", "spec.constructor"]);
  });

  it("never throws on any JSON, and names only spec paths, sorted and once each", () => {
    const keys = [...Object.keys(FIELD_SUPPORT).filter((k) => !k.includes(".")), "unknownField"];
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...keys), fc.anything({ maxDepth: 5, withNullPrototype: true })),
        (spec) => {
          const found = unsupportedFields(spec);
          assert.deepEqual(found, [...new Set(found)].sort());
          for (const f of found) assert.match(f, /^spec\./);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("classifies every manifest fixture without throwing", () => {
    for (const f of readdirSync(manifestDir).filter((n) => n.endsWith(".yaml") && n !== "restore.yaml"))
      assert.ok(Array.isArray(unsupportedFields(storedSpec(f))), f);
  });
});
