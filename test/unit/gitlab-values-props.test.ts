import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { GitLabCoreSpec } from "../../src/apis/gitlabcore.js";
import {
  effectiveValues,
  operatorOverrides,
  type Values,
  valueAt,
} from "../../src/targets/gitlab/values/index.js";

// Properties over arbitrary free-form values, keys the operator also uses mixed in: the merge never
// throws, never lets a free-form value beat an override, keeps every free-form leaf it accepts, and
// every refusal names a field under spec.chart.values without echoing a value.

const KEYS = [
  "global",
  "hosts",
  "domain",
  "gitlab",
  "name",
  "gatewayApi",
  "installEnvoy",
  "gitlab-runner",
  "install",
  "installCertmanager",
  "shared-secrets",
  "serviceAccount",
  "__proto__",
  "constructor",
  "x",
];
const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.string({ maxLength: 6 }).map((s) => `v:${s}`),
  fc.array(fc.integer(), { maxLength: 2 }),
);
const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.dictionary(fc.constantFrom(...KEYS), tie("tree"), { maxKeys: 4 }),
  ),
}));
const chartValues = fc.dictionary(fc.constantFrom(...KEYS), tree, { maxKeys: 5 });

function leaves(v: unknown, prefix: string[] = []): [string[], unknown][] {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0) return []; // an empty map merges into whatever is below: nothing to keep
    return keys.flatMap((k) => leaves((v as Values)[k], [...prefix, k]));
  }
  return [[prefix, v]];
}

const spec = (values: Values): GitLabCoreSpec => ({
  version: { type: "Static", version: "10.4.0" },
  hostname: "gitlab.example.com",
  networking: { envoyGatewayController: {} },
  chart: { values },
});

describe("gitlab values: properties", () => {
  it("never throws; overrides always win; accepted free-form leaves are kept; refusals name a field", () => {
    const overrideLeaves = leaves(operatorOverrides());
    fc.assert(
      fc.property(chartValues, (values) => {
        const input = JSON.parse(JSON.stringify(values)) as Values; // own "__proto__" keys, as JSON gives them
        const r = effectiveValues({ name: "g", namespace: "n", spec: spec(input), chartVersion: "10.4.0" });
        if (!r.ok) {
          for (const e of r.errors) {
            assert.ok(e.field.startsWith("spec.chart.values"), e.field);
            assert.ok(!/v:/.test(e.message), `a value is echoed: ${e.message}`);
          }
          return;
        }
        for (const [path, value] of overrideLeaves)
          assert.deepEqual(valueAt(r.values, path.join(".")), value);
        const overridden = (p: string[]) =>
          overrideLeaves.some(([o]) => o.every((k, i) => p[i] === k) || p.every((k, i) => o[i] === k));
        for (const [path, value] of leaves(input)) {
          if (path.length === 0 || overridden(path)) continue;
          assert.deepEqual(valueAt(r.values, path.join(".")), value, path.join("."));
        }
        assert.equal(({} as Values)["polluted"], undefined);
        assert.equal(Object.getPrototypeOf(r.values), Object.prototype);
      }),
      { numRuns: 3000 },
    );
  });
});
