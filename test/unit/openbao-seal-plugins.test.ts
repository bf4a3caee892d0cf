import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sealPluginProblem, sealsArePlugins } from "../../src/targets/openbao/validate/seal-plugins.js";

const awskms = { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "k" } };

describe("OpenBao 2.7's seal plugins", () => {
  it("2.7.0 and later (pre-releases included) serve the cloud and HSM seals through plugins", () => {
    for (const v of ["2.7.0", "v2.7.2", "2.7.0-rc1", "2.8.0", "3.0.0"]) assert.ok(sealsArePlugins(v), v);
    for (const v of ["2.6.2", "2.6.99", "not-a-version", undefined])
      assert.ok(!sealsArePlugins(v), String(v));
  });

  it("a removed built-in seal without its kms plugin is refused on spec.plugins, naming the plugin", () => {
    for (const type of ["awskms", "azurekeyvault", "gcpckms", "ocikms", "pkcs11"]) {
      const p = sealPluginProblem({ version: "2.7.2", unseal: { type } });
      assert.equal(p?.field, "spec.plugins", type);
      assert.match(p!.message, new RegExp(`type: kms, name: ${type}`));
    }
  });

  it("nothing to say below 2.7, for the built-in seals, or with the plugin declared", () => {
    assert.equal(sealPluginProblem({ version: "2.6.2", unseal: awskms }), undefined);
    for (const type of ["static", "transit", "kmip", "kms"])
      assert.equal(sealPluginProblem({ version: "2.7.2", unseal: { type } }), undefined, type);
    assert.equal(
      sealPluginProblem({
        version: "2.7.2",
        unseal: awskms,
        plugins: [{ type: "kms", name: "awskms", image: "ghcr.io/openbao/openbao-plugin-kms-awskms:v0.1.0" }],
      }),
      undefined,
    );
    // A plugin of another type or name does not count.
    assert.ok(
      sealPluginProblem({ version: "2.7.2", unseal: awskms, plugins: [{ type: "secret", name: "awskms" }] }),
    );
    assert.ok(
      sealPluginProblem({ version: "2.7.2", unseal: awskms, plugins: [{ type: "kms", name: "gcpckms" }] }),
    );
  });
});
