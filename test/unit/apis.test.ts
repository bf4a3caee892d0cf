import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse, parseAllDocuments } from "yaml";
import {
  allKinds,
  buildCrd,
  type CelRule,
  type ConditionStatus,
  crdFor,
  crdToYaml,
  type GitLabCore,
  GitLabCoreSchema,
  type JSONSchemaProps,
  kindFor,
  NonStructuralSchemaError,
  OpenBaoClusterSchema,
  OpenBaoRestoreSchema,
  SCHEMA_HASH_ANNOTATION,
  schemaErrors,
  schemaHash,
  structuralProblems,
  toStructural,
  type VaultSeed,
  VaultSeedCondition,
  VaultSeedReason,
  VaultSeedSchema,
  withDefaults,
} from "../../src/apis/index.js";
import { crdFileName, crdsAsYaml, renderCrdFiles } from "../../src/apis/write.js";

// Compiled to dist/test/unit/, three levels below the repository root.
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const crdDir = join(repoRoot, "deploy", "crds");
const sampleDir = join(repoRoot, "deploy", "samples");
const REGENERATE =
  "regenerate with `npm run build && npm run crds:write` (platform-operator crds --write deploy/crds)";

const rootOf = (kind: string): JSONSchemaProps => crdFor(kind).spec.versions[0].schema.openAPIV3Schema;

/** Follows a dotted path of property names through a structural schema. */
function node(kind: string, path: string): JSONSchemaProps {
  let at = rootOf(kind);
  for (const part of path.split(".")) {
    const next = part === "[]" ? at.items : at.properties?.[part];
    assert.ok(next, `${kind}: no schema at ${path} (stopped at ${part})`);
    at = next;
  }
  return at;
}

const rulesAt = (kind: string, path: string): string[] =>
  (node(kind, path)["x-kubernetes-validations"] ?? []).map((r) => String(r.rule));

function walk(value: unknown, visit: (obj: Record<string, unknown>, path: string) => void, path = ""): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) walk(v, visit, `${path}[${i}]`);
  } else if (value !== null && typeof value === "object") {
    visit(value as Record<string, unknown>, path);
    for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}.${k}`);
  }
}

describe("apis: checked-in CRDs", () => {
  it("deploy/crds holds exactly what the schemas generate", () => {
    const expected = renderCrdFiles();
    const onDisk = readdirSync(crdDir)
      .filter((f) => f.endsWith(".yaml"))
      .sort();
    assert.deepEqual(
      onDisk,
      expected.map((f) => f.fileName),
      `deploy/crds has other files than the generator writes; ${REGENERATE} and delete stale ones`,
    );
    for (const file of expected) {
      const actual = readFileSync(join(crdDir, file.fileName), "utf8");
      assert.ok(actual === file.content, `deploy/crds/${file.fileName} drifted from src/apis; ${REGENERATE}`);
    }
  });

  it("names each file <group>_<plural>.yaml and starts it with the generated-file header", () => {
    for (const k of allKinds) {
      assert.equal(crdFileName(k.crd), `${k.group}_${k.plural}.yaml`);
      assert.match(crdToYaml(k.crd), /^# Generated .*`platform-operator crds --write deploy\/crds`/);
    }
  });

  it("is deterministic and reads back as the same object", () => {
    for (const k of allKinds) {
      const again = buildCrd({
        group: k.group,
        version: k.version,
        kind: k.kind,
        plural: k.plural,
        scope: k.namespaced ? "Namespaced" : "Cluster",
        shortNames: [...k.shortNames],
        categories: k.crd.spec.names.categories,
        schema: k.schema,
        printerColumns: k.crd.spec.versions[0].additionalPrinterColumns,
      });
      assert.equal(crdToYaml(again), crdToYaml(k.crd), `${k.kind}: two builds differ`);
      assert.deepEqual(parse(crdToYaml(k.crd)), JSON.parse(JSON.stringify(k.crd)));
      assert.equal(k.crd.metadata.annotations[SCHEMA_HASH_ANNOTATION], schemaHash(k.crd.spec));
    }
  });

  it("streams every CRD as one multi-document YAML", () => {
    const docs = parseAllDocuments(crdsAsYaml()).map((d) => d.toJS());
    assert.deepEqual(
      docs.map((d) => d.metadata.name).sort(),
      allKinds.map((k) => `${k.plural}.${k.group}`).sort(),
    );
  });
});

describe("apis: every schema is structural", () => {
  for (const k of allKinds) {
    it(`${k.kind}`, () => {
      const schema = rootOf(k.kind);
      assert.deepEqual(structuralProblems(schema), []);
      walk(k.crd, (obj, path) => {
        assert.equal(Object.getOwnPropertySymbols(obj).length, 0, `${path} carries a TypeBox symbol`);
        for (const banned of [
          "$id",
          "$ref",
          "$schema",
          "anyOf",
          "oneOf",
          "allOf",
          "patternProperties",
          "const",
        ]) {
          assert.ok(!(banned in obj), `${path} carries ${banned}`);
        }
      });
      // Every property names a type, keeps unknown fields, or is int-or-string.
      walk(schema, (obj, path) => {
        const props = obj.properties as Record<string, JSONSchemaProps> | undefined;
        if (!props || path.endsWith(".default")) return;
        for (const [name, p] of Object.entries(props)) {
          const typed =
            p.type !== undefined ||
            p["x-kubernetes-preserve-unknown-fields"] === true ||
            p["x-kubernetes-int-or-string"] === true;
          assert.ok(typed, `${k.kind}${path}.${name} has no type`);
        }
      });
    });
  }

  it("writes apiVersion, kind and metadata the conventional way", () => {
    for (const k of allKinds) {
      const root = rootOf(k.kind);
      assert.equal(root.type, "object");
      assert.equal(root.properties?.apiVersion?.type, "string");
      assert.equal(root.properties?.kind?.type, "string");
      assert.deepEqual(root.properties?.metadata, { type: "object" });
      assert.deepEqual(root.required, ["spec"]);
      const v = k.crd.spec.versions;
      assert.equal(v.length, 1);
      assert.equal(v[0].name, k.version);
      assert.ok(v[0].served && v[0].storage);
      assert.deepEqual(v[0].subresources, { status: {} });
      assert.equal(k.crd.metadata.name, `${k.plural}.${k.group}`);
      assert.equal(k.crd.spec.scope, "Namespaced");
    }
  });

  it("refuses TypeBox shapes that have no structural form", () => {
    const refuse = (schema: Parameters<typeof toStructural>[0], what: RegExp) =>
      assert.throws(
        () => toStructural(schema),
        (e: unknown) => e instanceof NonStructuralSchemaError && what.test(e.message),
      );
    refuse(Type.Union([Type.String(), Type.Integer()]), /union of literals/);
    refuse(Type.Unknown(), /preserve-unknown-fields/);
    refuse(Type.Record(Type.String(), Type.Unknown()), /preserve-unknown-fields/);
    refuse(
      Type.Recursive((Self) => Type.Record(Type.String(), Type.Union([Type.String(), Self]))),
      /recursive/,
    );
    refuse(Type.Integer({ exclusiveMinimum: 0 }), /exclusiveMinimum/);
    refuse(Type.Array(Type.String(), { uniqueItems: true }), /uniqueItems/);
  });

  it("turns records into additionalProperties and int-or-string into the extension", () => {
    assert.deepEqual(toStructural(Type.Record(Type.String(), Type.String())), {
      type: "object",
      additionalProperties: { type: "string" },
    });
    assert.deepEqual(
      toStructural(Type.Union([Type.Integer(), Type.String()], { "x-kubernetes-int-or-string": true })),
      {
        "x-kubernetes-int-or-string": true,
      },
    );
    assert.deepEqual(toStructural(Type.Object({}, { additionalProperties: false })), { type: "object" });
  });
});

describe("apis: kinds, names and columns", () => {
  it("lists the six kinds with their groups, versions and plurals", () => {
    assert.deepEqual(
      allKinds.map((k) => [k.apiVersion, k.kind, k.plural]),
      [
        ["ohmlab.fr/v1alpha1", "VaultSeed", "vaultseeds"],
        ["apps.gitlab.com/v2alpha1", "GitLabCore", "gitlabcores"],
        ["apps.gitlab.com/v2alpha1", "GitLabSecrets", "gitlabsecrets"],
        ["openbao.org/v1alpha1", "OpenBaoCluster", "openbaoclusters"],
        ["openbao.org/v1alpha1", "OpenBaoRestore", "openbaorestores"],
        ["openbao.org/v1alpha1", "OpenBaoTenant", "openbaotenants"],
      ],
    );
  });

  it("finds a CRD by kind, plural or full name and names the known kinds otherwise", () => {
    assert.equal(crdFor("VaultSeed").metadata.name, "vaultseeds.ohmlab.fr");
    assert.equal(crdFor("openbaoclusters").metadata.name, "openbaoclusters.openbao.org");
    assert.equal(kindFor("gitlabcores.apps.gitlab.com")?.kind, "GitLabCore");
    assert.throws(() => crdFor("Nope"), /unknown kind "Nope".*VaultSeed/);
  });

  it("gives OpenBao and GitLab their short names and every kind its printer columns", () => {
    assert.deepEqual(crdFor("OpenBaoCluster").spec.names.shortNames, ["bao", "baoc"]);
    assert.deepEqual(crdFor("OpenBaoRestore").spec.names.shortNames, ["obrestore"]);
    assert.deepEqual(crdFor("OpenBaoTenant").spec.names.shortNames, ["obt"]);
    assert.deepEqual(crdFor("GitLabCore").spec.names.shortNames, ["glc"]);
    const columns = (kind: string) =>
      (crdFor(kind).spec.versions[0].additionalPrinterColumns ?? [])
        .filter((c) => !c.priority)
        .map((c) => c.name);
    assert.deepEqual(columns("VaultSeed"), ["Path", "Ready", "Reason", "Age"]);
    assert.deepEqual(columns("OpenBaoCluster"), ["Phase", "Version", "Ready", "Age"]);
    assert.deepEqual(columns("OpenBaoTenant"), ["Target Namespace", "Provisioned", "Age"]);
    const ready = crdFor("VaultSeed").spec.versions[0].additionalPrinterColumns?.find(
      (c) => c.name === "Reason",
    );
    assert.equal(ready?.jsonPath, '.status.conditions[?(@.type=="Ready")].reason');
  });

  it("exports the condition and reason names of document 003", () => {
    assert.deepEqual(Object.values(VaultSeedCondition), ["Ready", "Reconciling", "Stalled", "Drifted"]);
    assert.ok((Object.values(VaultSeedReason) as string[]).includes("OwnedByAnother"));
    assert.ok((Object.values(VaultSeedReason) as string[]).includes("BackendUnavailable"));
  });
});

describe("apis: defaults and limits", () => {
  it("defaults what the documents promise", () => {
    assert.equal(node("VaultSeed", "spec.prune").default, false);
    assert.equal(node("VaultSeed", "spec.deletionPolicy").default, "Retain");
    assert.deepEqual(node("VaultSeed", "spec.deletionPolicy").enum, ["Retain", "Delete"]);
    assert.equal(node("GitLabCore", "spec.edition").default, "ee");
    assert.equal(node("GitLabCore", "spec.openbao.postgresql.port").default, 5432);
    assert.equal(node("GitLabCore", "spec.openbao.postgresql.database").default, "openbao");
    assert.equal(node("GitLabCore", "spec.openbao.postgresql.username").default, "openbao");
    assert.ok(node("GitLabCore", "spec.openbao.postgresql").required?.includes("passwordSecretRef"));
    assert.equal(node("GitLabCore", "spec.upgrade.skipBatchedMigrationCheck").default, false);
    assert.equal(node("OpenBaoCluster", "spec.replicas").default, 3);
    assert.equal(node("OpenBaoCluster", "spec.replicas").minimum, 1);
    assert.deepEqual(node("OpenBaoCluster", "spec.tls").default, {});
    assert.equal(node("OpenBaoCluster", "spec.tls.mode").default, "OperatorManaged");
    assert.equal(node("OpenBaoCluster", "spec.upgrade.strategy").default, "RollingUpdate");
    assert.equal(node("OpenBaoCluster", "spec.backup.target.provider").default, "s3");
    assert.equal(node("OpenBaoRestore", "spec.force").default, false);
    assert.equal(node("OpenBaoRestore", "spec.overrideOperationLock").default, false);
  });

  it("fills defaults the way the API server does", () => {
    const bare = withDefaults(OpenBaoClusterSchema, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "x" },
      spec: { version: "2.4.1", storage: { size: "1Gi" } },
    });
    assert.equal(bare.spec.replicas, 3);
    assert.deepEqual(bare.spec.tls, { enabled: true, mode: "OperatorManaged", rotationPeriod: "720h" });
    // Upstream has no default here: an unset deletionPolicy stays unset and means Retain.
    assert.equal(bare.spec.deletionPolicy, undefined);
  });

  it("keeps conditions in metav1.Condition form, merged by type", () => {
    for (const k of allKinds) {
      const c = node(k.kind, "status.conditions");
      assert.equal(c["x-kubernetes-list-type"], "map", k.kind);
      assert.deepEqual(c["x-kubernetes-list-map-keys"], ["type"]);
      assert.deepEqual(c.items?.required, ["lastTransitionTime", "message", "reason", "status", "type"]);
      assert.deepEqual(c.items?.properties?.status?.enum, ["True", "False", "Unknown"]);
      assert.equal(c.items?.properties?.lastTransitionTime?.format, "date-time");
    }
  });

  it("bounds every string and list a CEL rule reads, so the cost estimate stays small", () => {
    for (const k of allKinds) {
      walk(rootOf(k.kind), (obj, path) => {
        const p = obj as JSONSchemaProps;
        if (!p["x-kubernetes-validations"]) return;
        walk(p, (inner, innerPath) => {
          const q = inner as JSONSchemaProps;
          if (q.type === "string" && q.enum === undefined && !innerPath.includes(".default")) {
            assert.ok(
              q.maxLength !== undefined,
              `${k.kind}${path}${innerPath}: string under a CEL rule needs maxLength`,
            );
          }
          if (q.type === "array") {
            assert.ok(
              q.maxItems !== undefined,
              `${k.kind}${path}${innerPath}: list under a CEL rule needs maxItems`,
            );
          }
        });
      });
    }
  });
});

describe("apis: CEL rules", () => {
  it("makes a VaultSeed's path and an OpenBaoRestore's spec immutable", () => {
    assert.deepEqual(rulesAt("VaultSeed", "spec.path"), ["self == oldSelf"]);
    assert.ok(rulesAt("OpenBaoRestore", "spec").includes("self == oldSelf"));
    const message = node("VaultSeed", "spec.path")["x-kubernetes-validations"]?.[0].message;
    assert.match(String(message), /immutable/);
  });

  it("lets storage only grow, comparing quantities", () => {
    const [rule] = rulesAt("OpenBaoCluster", "spec.storage.size");
    assert.match(rule, /quantity\(self\)\.isLessThan\(quantity\(oldSelf\)\)/);
  });

  it("enforces the GitLabCore version union and the single networking mode", () => {
    const rules = rulesAt("GitLabCore", "spec.version");
    assert.ok(rules.some((r) => r.includes("has(self.version) != has(self.versionRef)")));
    assert.ok(rules.some((r) => r.includes("has(self.minor)")));
    assert.ok(rules.some((r) => r.includes("has(self.major)")));
    assert.equal(rulesAt("GitLabCore", "spec.networking").length, 1);
  });

  it("ties overrideOperationLock to force", () => {
    assert.ok(
      rulesAt("OpenBaoRestore", "spec").some(
        (r) => r.includes("self.overrideOperationLock") && r.includes("self.force"),
      ),
    );
  });

  it("gives every rule a message", () => {
    for (const k of allKinds) {
      walk(rootOf(k.kind), (obj, path) => {
        for (const r of (obj["x-kubernetes-validations"] ?? []) as CelRule[]) {
          assert.ok(r.message && r.message.length > 0, `${k.kind}${path}: rule ${r.rule} has no message`);
        }
      });
    }
  });
});

describe("apis: samples", () => {
  const samples = readdirSync(sampleDir)
    .filter((f) => f.endsWith(".yaml"))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(sampleDir, f), "utf8")).map((d) => ({ file: f, doc: d.toJS() })),
    );

  it("covers VaultSeed, GitLabCore and OpenBaoCluster", () => {
    const kinds = new Set(samples.map((s) => s.doc.kind));
    for (const k of ["VaultSeed", "GitLabCore", "OpenBaoCluster"])
      assert.ok(kinds.has(k), `no sample for ${k}`);
  });

  for (const { file, doc } of samples) {
    it(`${file} (${doc.kind}) matches its schema`, () => {
      const kind = kindFor(doc.kind);
      assert.ok(kind, `${file}: unknown kind ${doc.kind}`);
      assert.equal(doc.apiVersion, kind.apiVersion);
      assert.deepEqual(schemaErrors(kind.schema, doc), []);
      assert.ok(Value.Check(kind.schema, withDefaults(kind.schema, doc)));
    });
  }

  it("keeps the GitLabCore sample Static and the OpenBaoCluster sample at three OperatorManaged voters", () => {
    const gitlab = samples.find((s) => s.doc.kind === "GitLabCore")?.doc as GitLabCore;
    assert.equal(gitlab.spec.version?.type, "Static");
    const bao = samples.find((s) => s.doc.kind === "OpenBaoCluster")?.doc;
    assert.equal(bao.spec.replicas, 3);
    assert.equal(bao.spec.tls.mode, "OperatorManaged");
  });
});

describe("apis: checking objects", () => {
  const seed = (spec: Record<string, unknown>, status?: Record<string, unknown>): unknown => ({
    apiVersion: "ohmlab.fr/v1alpha1",
    kind: "VaultSeed",
    metadata: { name: "s", namespace: "n" },
    spec,
    ...(status ? { status } : {}),
  });

  it("names the field and the problem", () => {
    const errors = schemaErrors(VaultSeedSchema, seed({ path: "nomount", data: {}, deletionPolicy: "Keep" }));
    assert.deepEqual(
      errors.map((e) => e.path),
      ["spec.path", "spec.deletionPolicy"],
    );
    assert.equal(errors[1].message, "must be one of: Retain, Delete");
  });

  it("accepts a nested tree of strings, numbers and booleans and refuses other leaves", () => {
    assert.deepEqual(
      schemaErrors(VaultSeedSchema, seed({ path: "m/p", data: { a: { b: { c: "x" } }, n: 3, t: true } })),
      [],
    );
    const errors = schemaErrors(VaultSeedSchema, seed({ path: "m/p", data: { a: { b: [3] } } }));
    assert.equal(errors[0]?.path, "spec.data.a");
  });

  it("checks condition timestamps and statuses", () => {
    const condition = (status: ConditionStatus | "Maybe", lastTransitionTime: string) => ({
      type: "Ready",
      status,
      reason: "Reconciled",
      message: "",
      lastTransitionTime,
    });
    const ok = seed({ path: "m/p", data: {} }, { conditions: [condition("True", "2025-06-01T10:00:00Z")] });
    assert.deepEqual(schemaErrors(VaultSeedSchema, ok), []);
    const badTime = seed({ path: "m/p", data: {} }, { conditions: [condition("True", "yesterday")] });
    assert.equal(schemaErrors(VaultSeedSchema, badTime)[0]?.path, "status.conditions[0].lastTransitionTime");
    const badStatus = seed(
      { path: "m/p", data: {} },
      { conditions: [condition("Maybe", "2025-06-01T10:00:00Z")] },
    );
    assert.equal(schemaErrors(VaultSeedSchema, badStatus)[0]?.path, "status.conditions[0].status");
  });

  it("types objects from the same schema", () => {
    // Compiles only if the static types line up with the schema.
    const typed: VaultSeed = {
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { name: "s" },
      spec: { path: "m/p", data: { a: "<random:8>" }, deletionPolicy: "Delete" },
    };
    assert.deepEqual(schemaErrors(VaultSeedSchema, typed), []);
    assert.deepEqual(
      schemaErrors(GitLabCoreSchema, {
        apiVersion: "apps.gitlab.com/v2alpha1",
        kind: "GitLabCore",
        metadata: {},
        spec: { version: { type: "Latest" }, hostname: "gitlab.example.com" },
      }),
      [],
    );
    assert.equal(
      schemaErrors(OpenBaoRestoreSchema, {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoRestore",
        metadata: {},
        spec: { cluster: "c", source: { key: "k", target: { bucket: "b", provider: "minio" } } },
      })[0]?.path,
      "spec.source.target.provider",
    );
  });
});
