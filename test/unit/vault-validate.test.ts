import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ManifestDocument } from "../../src/runtime/target.js";
import { compileSeed, validateDocuments } from "../../src/targets/vault/validate.js";

function seed(name: string, spec: Record<string, unknown>, namespace = "vault"): Record<string, unknown> {
  return { apiVersion: "ohmlab.fr/v1alpha1", kind: "VaultSeed", metadata: { name, namespace }, spec };
}

describe("vault validate: one spec", () => {
  it("compiles a valid spec into sorted declarations and its distinct references", () => {
    const compiled = compileSeed({
      path: "ohmlab/apps/keycloak",
      data: {
        admin: { password: "<random:24>", passwordHashed: "<bcrypt:admin.password>" },
        db: { password: "<ref:ohmlab/apps/db#password>", copy: "<ref:ohmlab/apps/db#password>" },
      },
      rotate: { token: "t1", keys: ["admin.password"] },
    });
    assert.ok(compiled.ok);
    assert.deepEqual(
      [...compiled.seed.declarations.keys()],
      ["admin.password", "admin.passwordHashed", "db.copy", "db.password"],
    );
    assert.deepEqual(
      compiled.seed.refs.map((r) => r.id),
      ["ohmlab/apps/db#password"],
    );
    assert.deepEqual(compiled.seed.rotate, { token: "t1", keys: ["admin.password"] });
    assert.equal(compiled.seed.prune, false);
    assert.equal(compiled.seed.deletionPolicy, "Retain");
  });

  it("treats an empty rotation token as no rotation", () => {
    const compiled = compileSeed({ path: "a/b", data: { k: "<uuid>" }, rotate: { token: "" } });
    assert.ok(compiled.ok);
    assert.equal(compiled.seed.rotate, undefined);
  });

  it("tells spec problems from rotation problems", () => {
    const compiled = compileSeed({
      path: "a/b",
      data: { k: "<random:0>", lit: "x", gen: "<uuid>" },
      rotate: { token: "t", keys: ["missing", "lit"] },
    });
    assert.ok(!compiled.ok);
    assert.deepEqual(compiled.problems, [
      { key: "k", reason: "InvalidSpec", message: "k: random length must be between 1 and 4096" },
      {
        key: "missing",
        reason: "InvalidRotation",
        message: "rotate.keys names missing, which data does not declare",
      },
      {
        key: "lit",
        reason: "InvalidRotation",
        message:
          "rotate.keys names lit, which is not generated (only random, hex, uuid, policy and age keys rotate)",
      },
    ]);
  });

  it("rejects a rotation token too long for custom_metadata", () => {
    const compiled = compileSeed({ path: "a/b", data: { k: "<uuid>" }, rotate: { token: "x".repeat(513) } });
    assert.ok(!compiled.ok);
    assert.equal(compiled.problems[0]?.message, "spec.rotate.token is longer than 512 bytes");
  });

  it("checks age pairs, bcrypt targets and references to the object's own path", () => {
    const messages = (spec: Record<string, unknown>): string[] => {
      const compiled = compileSeed(spec);
      return compiled.ok ? [] : compiled.problems.map((p) => p.message);
    };
    assert.deepEqual(messages({ path: "a/b", data: { pub: "<age:public>" } }), [
      "pub: <age:public> needs an <age:secret> in the same path",
    ]);
    assert.deepEqual(messages({ path: "a/b", data: { s1: "<age:secret>", s2: "<age:secret>" } }), [
      "a path holds one age key pair; <age:secret> is declared at s1, s2",
    ]);
    assert.deepEqual(messages({ path: "a/b", data: { h: "<bcrypt:h2>", h2: "<bcrypt:x>", x: "v" } }), [
      "h: bcrypt target h2 is itself a bcrypt",
    ]);
    assert.deepEqual(messages({ path: "a/b", data: { k: "<ref:a/b#other>", other: "x" } }), [
      "k: a reference must name another path; use <bcrypt:> or a literal within one path",
    ]);
  });
});

describe("vault validate: manifests", () => {
  it("reports every problem with file, object and key", () => {
    const docs: ManifestDocument[] = [
      {
        file: "a.yaml",
        doc: seed("keycloak", {
          path: "ohmlab/apps/keycloak",
          data: {
            admin: { password: "<random:0>", hash: "<bcrypt:admin.pasword>" },
            "bad.key": "x",
          },
          rotate: { token: "t", keys: ["admin.nope"] },
          deletionPolicy: "Destroy",
        }),
      },
      { file: "a.yaml", doc: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ignored" } } },
      { file: "b.yaml", doc: seed("nopath", { path: "ohmlab", data: {} }) },
    ];
    assert.deepEqual(validateDocuments(docs), [
      {
        file: "a.yaml",
        object: "vault/keycloak",
        key: "bad.key",
        message: 'key name "bad.key" contains a dot; nest it as a map instead',
      },
      {
        file: "a.yaml",
        object: "vault/keycloak",
        key: "admin.password",
        message: "admin.password: random length must be between 1 and 4096",
      },
      {
        file: "a.yaml",
        object: "vault/keycloak",
        key: "admin.hash",
        message: "admin.hash: bcrypt target admin.pasword is not declared in data",
      },
      {
        file: "a.yaml",
        object: "vault/keycloak",
        key: "admin.nope",
        message: "rotate.keys names admin.nope, which data does not declare",
      },
      { file: "a.yaml", object: "vault/keycloak", message: "spec.deletionPolicy must be Retain or Delete" },
      { file: "b.yaml", object: "vault/nopath", message: "spec.path needs <mount>/<path>" },
    ]);
  });

  it("reports two objects on one path and a name used twice", () => {
    const docs: ManifestDocument[] = [
      { file: "a.yaml", doc: seed("one", { path: "kv/shared", data: { k: "v" } }) },
      { file: "b.yaml", doc: seed("two", { path: "kv/shared", data: { k: "v" } }) },
      { file: "c.yaml", doc: seed("one", { path: "kv/other", data: { k: "v" } }) },
    ];
    assert.deepEqual(validateDocuments(docs), [
      {
        file: "a.yaml",
        object: "vault/one",
        message: "the name vault/one is also declared in vault/one (c.yaml)",
      },
      {
        file: "c.yaml",
        object: "vault/one",
        message: "the name vault/one is also declared in vault/one (a.yaml)",
      },
      { file: "a.yaml", object: "vault/one", message: "path kv/shared is also seeded by vault/two (b.yaml)" },
      { file: "b.yaml", object: "vault/two", message: "path kv/shared is also seeded by vault/one (a.yaml)" },
    ]);
  });

  it("reports reference cycles on the keys that close them, and accepts chains", () => {
    const docs: ManifestDocument[] = [
      { file: "x.yaml", doc: seed("x", { path: "kv/x", data: { a: "<ref:kv/y#b>", own: "<random:8>" } }) },
      { file: "y.yaml", doc: seed("y", { path: "kv/y", data: { b: "<ref:kv/x#own>" } }) },
      { file: "z.yaml", doc: seed("z", { path: "kv/z", data: { c: "<ref:kv/x#own>" } }) },
    ];
    assert.deepEqual(validateDocuments(docs), [
      { file: "x.yaml", object: "vault/x", key: "a", message: "reference cycle between paths kv/x, kv/y" },
      { file: "y.yaml", object: "vault/y", key: "b", message: "reference cycle between paths kv/x, kv/y" },
    ]);
  });

  it("reads List documents, names objects without a namespace, and needs a name", () => {
    const docs: ManifestDocument[] = [
      {
        file: "-",
        doc: {
          apiVersion: "v1",
          kind: "List",
          items: [
            {
              apiVersion: "ohmlab.fr/v1alpha1",
              kind: "VaultSeed",
              metadata: { name: "bare" },
              spec: { path: "a/b", data: { k: [1] } },
            },
            {
              apiVersion: "ohmlab.fr/v1alpha1",
              kind: "VaultSeed",
              metadata: {},
              spec: { path: "a/c", data: {} },
            },
          ],
        },
      },
    ];
    assert.deepEqual(validateDocuments(docs), [
      {
        file: "-",
        object: "bare",
        key: "k",
        message: "k must be a string, a number, a boolean or a map, found a list",
      },
      { file: "-", object: "(unnamed)", message: "metadata.name is missing" },
    ]);
  });

  it("finds nothing wrong in the documentation's example", () => {
    const docs: ManifestDocument[] = [
      {
        file: "keycloak.yaml",
        doc: seed(
          "production-core-keycloak",
          {
            path: "ohmlab/platforms/production/core/keycloak",
            data: {
              admin: {
                username: "admin",
                password: "<random:24>",
                passwordHashed: "<bcrypt:admin.password>",
              },
              clients: { "grafana-core": { clientSecret: "<random:32>" } },
              webhook: "",
            },
            rotate: { token: "2026-10-12", keys: ["admin.password"] },
            prune: false,
            deletionPolicy: "Retain",
          },
          "vault-operator-system",
        ),
      },
    ];
    assert.deepEqual(validateDocuments(docs), []);
  });
});
