import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isGenerated, parseLeaf, type Template } from "../../src/targets/vault/templates.js";

function template(text: string): Template {
  const parsed = parseLeaf(text);
  assert.ok(parsed.ok, `expected ${text} to parse`);
  return parsed.template;
}

function error(text: string): string {
  const parsed = parseLeaf(text);
  assert.ok(!parsed.ok, `expected ${text} to be rejected`);
  return parsed.message;
}

describe("vault templates", () => {
  it("parses every template form", () => {
    assert.deepEqual(template("<random:24>"), { kind: "random", length: 24 });
    assert.deepEqual(template("<random:1>"), { kind: "random", length: 1 });
    assert.deepEqual(template("<random:4096>"), { kind: "random", length: 4096 });
    assert.deepEqual(template("<hex:64>"), { kind: "hex", length: 64 });
    assert.deepEqual(template("<hex:2>"), { kind: "hex", length: 2 });
    assert.deepEqual(template("<uuid>"), { kind: "uuid" });
    assert.deepEqual(template("<age:secret>"), { kind: "age-secret" });
    assert.deepEqual(template("<age:public>"), { kind: "age-public" });
    assert.deepEqual(template("<bcrypt:admin.password>"), { kind: "bcrypt", target: "admin.password" });
    assert.deepEqual(template("<ref:ohmlab/platforms/prod/db#users.app.password>"), {
      kind: "ref",
      ref: {
        id: "ohmlab/platforms/prod/db#users.app.password",
        path: "ohmlab/platforms/prod/db",
        key: "users.app.password",
      },
    });
  });

  it("treats plain strings, including the empty placeholder, as literals", () => {
    for (const text of ["", "admin", "<>", "a <b>", "<1234>", "< random:3 >", "<random:3"]) {
      assert.deepEqual(template(text), { kind: "literal", value: text });
    }
  });

  it("rejects malformed templates with a precise message", () => {
    assert.equal(error("<random:0>"), "random length must be between 1 and 4096");
    assert.equal(error("<random:4097>"), "random length must be between 1 and 4096");
    assert.equal(error("<random:-1>"), "random length must be a whole number");
    assert.equal(error("<random:2.5>"), "random length must be a whole number");
    assert.equal(error("<random>"), "random needs a length: <random:N>");
    assert.equal(error("<random:>"), "random needs a length: <random:N>");
    assert.equal(error("<hex:3>"), "hex length must be an even number between 2 and 4096");
    assert.equal(error("<hex:0>"), "hex length must be an even number between 2 and 4096");
    assert.equal(error("<hex:4098>"), "hex length must be an even number between 2 and 4096");
    assert.equal(error("<uuid:4>"), "uuid takes no argument: <uuid>");
    assert.equal(error("<age:private>"), "age must be <age:secret> or <age:public>");
    assert.equal(error("<age>"), "age must be <age:secret> or <age:public>");
    assert.equal(error("<bcrypt>"), "bcrypt needs the key it hashes: <bcrypt:key.path>");
    assert.equal(error("<bcrypt:>"), "bcrypt needs a key path");
    assert.equal(error("<bcrypt:a..b>"), "bcrypt key path has an empty segment");
    assert.equal(error("<ref>"), "ref needs its source: <ref:mount/path#key.path>");
    assert.equal(error("<ref:mount/path>"), "ref needs mount/path#key.path");
    assert.equal(error("<ref:mount#key>"), "ref path needs <mount>/<path>");
    assert.equal(
      error("<ref:mount//x#key>"),
      "ref path has an empty segment (leading, trailing or doubled /)",
    );
    assert.equal(error("<ref:mount/x#>"), "ref needs a key path");
    assert.match(error("<randon:24>"), /^unknown template "randon"; the templates are <random:N>, /);
    assert.match(error("<random 24>"), /^unknown template "random 24"/);
    assert.match(error("<RANDOM:24>"), /^unknown template "RANDOM"/);
  });

  it("says which templates draw fresh randomness", () => {
    const generated = ["<random:8>", "<hex:8>", "<uuid>", "<age:secret>", "<age:public>"];
    const derived = ["x", "", "<bcrypt:a>", "<ref:m/p#k>"];
    for (const text of generated) assert.equal(isGenerated(template(text)), true, text);
    for (const text of derived) assert.equal(isGenerated(template(text)), false, text);
  });
});
