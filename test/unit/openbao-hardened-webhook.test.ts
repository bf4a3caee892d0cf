import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AdmissionRequest } from "../../src/runtime/admission.js";
import { openBaoVerdict } from "../../src/targets/openbao/admission.js";
import { CLUSTER_POLICY } from "../../src/targets/openbao/policies/rules.js";
import { CLUSTER_BASE, caseMessage, HARDENED_CASES } from "../support/openbao-policy-cases.js";

// Profile Hardened's refusals in the operator's own webhook, on the same cases the chart's
// policy is shown on the real API server (openbao-admission-policies.test.ts): a cluster installed
// without the policies refuses the same objects, each by its field.

const request = (spec: Record<string, unknown>, oldSpec?: Record<string, unknown>): AdmissionRequest => ({
  uid: "u",
  kind: { group: "openbao.org", version: "v1alpha1", kind: "OpenBaoCluster" },
  operation: oldSpec ? "UPDATE" : "CREATE",
  name: "c",
  namespace: "team-a",
  object: {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "c", namespace: "team-a" },
    spec,
  },
  ...(oldSpec ? { oldObject: { metadata: { name: "c" }, spec: oldSpec } } : {}),
});

describe("the webhook refuses what profile Hardened refuses", () => {
  it("every Hardened rule of the table is the webhook's too, and has a case", () => {
    const webhook = CLUSTER_POLICY.rules.filter((r) => r.webhook).map((r) => r.id);
    assert.deepEqual(
      webhook,
      HARDENED_CASES.map((c) => c.rule),
    );
  });

  for (const c of HARDENED_CASES) {
    it(`${c.rule}: refused by field with the policy's message, its fixed twin admitted`, () => {
      const rule = c.table.rules.find((r) => r.id === c.rule)!;
      const bad = openBaoVerdict(request({ ...CLUSTER_BASE, ...c.bad }));
      assert.deepEqual(
        bad.errors.filter((e) => e.message === caseMessage(c)),
        [{ field: rule.field, message: caseMessage(c) }],
        JSON.stringify(bad.errors),
      );
      const good = openBaoVerdict(request({ ...CLUSTER_BASE, ...c.good }));
      assert.deepEqual(
        good.errors.filter((e) => CLUSTER_POLICY.rules.some((r) => r.message === e.message)),
        [],
      );
      // An update to the bad object is refused as well (the webhook sees UPDATE too).
      assert.ok(
        openBaoVerdict(request({ ...CLUSTER_BASE, ...c.bad }, { ...CLUSTER_BASE, ...c.good })).errors.some(
          (e) => e.message === caseMessage(c),
        ),
      );
    });
  }

  it("a Development cluster with the same settings is admitted by these rules", () => {
    for (const c of HARDENED_CASES) {
      const v = openBaoVerdict(request({ ...CLUSTER_BASE, ...c.bad, profile: "Development" }));
      assert.deepEqual(
        v.errors.filter((e) => e.message === caseMessage(c)),
        [],
        c.rule,
      );
    }
  });
});
