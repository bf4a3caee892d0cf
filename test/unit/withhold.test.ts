import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { WITHHELD, withholdDetails, withholdValues } from "../../src/runtime/withhold.js";

describe("withholding values from API server errors", () => {
  it("keeps field and reason, withholds quoted values (escapes included), numbers and Go-printed maps", () => {
    const msg =
      'ConfigMap "c" is invalid: [metadata.labels: Invalid value: "canary \\"q\\" v!": a valid label must be ' +
      "an empty string or consist of alphanumeric characters, data[x]: Invalid value: 70000: too big, " +
      'spec.env: Invalid value: map[string]interface {}{"k":"canary-map"}: must be a list]';
    const out = withholdValues(msg);
    assert.ok(!out.includes("canary"), out);
    assert.ok(!out.includes("70000"), out);
    assert.ok(
      out.startsWith(`ConfigMap "c" is invalid: [metadata.labels: Invalid value: ${WITHHELD}: a valid label`),
    );
    assert.ok(out.includes(`data[x]: Invalid value: ${WITHHELD}: too big`));
    assert.ok(out.includes(`spec.env: Invalid value: ${WITHHELD}: must be a list`));
  });

  it("withholds the value of Unsupported, Duplicate and Not found, and keeps the schema's allowed list", () => {
    const out = withholdValues(
      'spec.unseal.type: Unsupported value: "canary-1": supported values: "static", "transit"; ' +
        'spec.audit[1].path: Duplicate value: "canary-2"; secrets "canary-3" not found; x: Not found: "canary-4"',
    );
    for (const c of ["canary-1", "canary-2", "canary-4"]) assert.ok(!out.includes(c), out);
    assert.ok(out.includes('supported values: "static", "transit"'));
    // Object names are not values: a NotFound for a named object keeps its name.
    assert.ok(out.includes('secrets "canary-3" not found'));
  });

  it("leaves messages without values as they are, and a value at the end of the text", () => {
    const plain = 'strict decoding error: unknown field "spec.foo"';
    assert.equal(withholdValues(plain), plain);
    assert.equal(withholdValues('spec.x: Invalid value: "canary-end"'), `spec.x: Invalid value: ${WITHHELD}`);
    assert.equal(withholdValues("spec.n: Invalid value: 12345"), `spec.n: Invalid value: ${WITHHELD}`);
  });

  it("keeps a CEL rule's message, which the API server prints with no value (kube-apiserver 1.37)", () => {
    const cel =
      "spec.networking: Invalid value: set at most one of envoyGatewayController, gatewayClass and gateway";
    assert.equal(withholdValues(cel), cel);
    const withColon = "spec: Invalid value: an OpenBaoRestore is immutable: create a new one instead";
    assert.equal(withholdValues(withColon), withColon);
    assert.equal(
      withholdValues('a: Invalid value: "s3cr3t": must be short'),
      `a: Invalid value: ${WITHHELD}: must be short`,
    );
  });

  it("withholds each cause's message in a Status's details", () => {
    const details = {
      name: "c",
      kind: "configmaps",
      causes: [{ reason: "FieldValueInvalid", field: "data", message: 'Invalid value: "canary-d": bad' }],
    };
    const out = withholdDetails(details) as typeof details;
    assert.equal(out.causes[0]!.field, "data");
    assert.equal(out.causes[0]!.message, `Invalid value: ${WITHHELD}: bad`);
    assert.equal(details.causes[0]!.message, 'Invalid value: "canary-d": bad', "input unchanged");
    assert.equal(withholdDetails(undefined), undefined);
  });
});
