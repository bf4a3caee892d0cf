import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { chartPolicyJson } from "../../src/targets/openbao/policies/chart-data.js";
import { summarize } from "../../src/targets/openbao/policies/dependencies.js";
import { POLICY_TABLES, refusals, TENANT_POLICY } from "../../src/targets/openbao/policies/rules.js";
import {
  admissionPolicyProblems,
  DEFAULT_OPERATOR_NAMESPACE,
} from "../../src/targets/openbao/validate/policies.js";
import {
  ALL_CASES,
  CLUSTER_BASE,
  caseAuthorizer,
  caseMessage,
  RESTORE_BASE,
} from "../support/openbao-policy-cases.js";

// The TypeScript half of the admission rule table (what `validate --admission-policies` runs) on
// the cases the integration test shows the chart's policies on the real API server.

const CASES = ALL_CASES;
/** The tenant table's rules, each shown below on tenants (their case needs a namespace, not a spec). */
const TENANT_RULES_SHOWN = ["tenant-own-namespace"];
const OP_NS = "po-system";
const tenant = (namespace: string | undefined, targetNamespace?: string) => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoTenant",
  metadata: { name: "t", ...(namespace === undefined ? {} : { namespace }) },
  spec: targetNamespace === undefined ? {} : { targetNamespace },
});
const tenantRefusals = (namespace: string | undefined, target?: string, operatorNamespace = OP_NS) =>
  refusals(TENANT_POLICY, { object: tenant(namespace, target), operatorNamespace }).map((r) => r.id);
const CHART_FILE = fileURLToPath(
  new URL("../../../deploy/chart/platform-operator/admission/openbao.json", import.meta.url),
);

describe("the openbao admission rules, as validate runs them", () => {
  for (const c of CASES) {
    it(`${c.table.name} ${c.rule}: refuses the case with its message only, admits the fixed twin`, () => {
      const base = c.table.resource === "openbaorestores" ? RESTORE_BASE : CLUSTER_BASE;
      const old = c.before ? { spec: { ...base, ...c.before } } : undefined;
      // Writers: for a rule that asks the authorizer, the refused one holds only what the case
      // says and the admitted one everything; for the others, one who holds everything (as the
      // integration test's admin does).
      const input = (spec: Record<string, unknown>, everything: boolean) => ({
        object: { metadata: { name: "c" }, spec: { ...base, ...spec } },
        ...(old ? { oldObject: old } : {}),
        authorizer: caseAuthorizer(c, everything || !c.authz),
      });
      assert.deepEqual(
        refusals(c.table, input(c.bad, false)).map((r) => r.message),
        [caseMessage(c)],
      );
      assert.deepEqual(refusals(c.table, input(c.good, true)), []);
    });
  }

  it("every rule has a case, and every message is the table's own", () => {
    for (const t of POLICY_TABLES)
      for (const r of t.rules)
        assert.ok(
          t === TENANT_POLICY
            ? TENANT_RULES_SHOWN.includes(r.id)
            : CASES.some((c) => c.table === t && c.rule === r.id),
          `${t.name} ${r.id} has no case`,
        );
  });

  it("validate-openbaotenant: a tenant outside the operator's namespace may target only its own", () => {
    const [rule] = TENANT_POLICY.rules;
    assert.equal(rule?.id, "tenant-own-namespace");
    assert.match(rule?.message ?? "", /spec\.targetNamespace/);
    // Refused: another namespace's tenant onboarding a third; or the operator's, with no operator
    // namespace known to match.
    assert.deepEqual(tenantRefusals("team-a", "team-b"), ["tenant-own-namespace"]);
    assert.deepEqual(tenantRefusals("team-a", OP_NS), ["tenant-own-namespace"]);
    assert.deepEqual(tenantRefusals("team-a", "team-b", "team-b"), ["tenant-own-namespace"]);
    // Admitted: its own namespace; any target from the operator's namespace; no target at all.
    assert.deepEqual(tenantRefusals("team-a", "team-a"), []);
    assert.deepEqual(tenantRefusals(OP_NS, "team-b"), []);
    assert.deepEqual(tenantRefusals("team-a", undefined), []);
    assert.deepEqual(tenantRefusals("team-a", ""), []);
    // Without metadata.namespace (offline) the tenant is taken to be in "default".
    assert.deepEqual(tenantRefusals(undefined, "default"), []);
    assert.deepEqual(tenantRefusals(undefined, "team-b"), ["tenant-own-namespace"]);
    assert.deepEqual(tenantRefusals(undefined, "team-b", "default"), []);
  });

  it("validate checks tenants against the operator's namespace it is given, platform-operator-system by default", () => {
    const at = (doc: unknown) => ({ file: "t.yaml", document: 1, line: 1, doc });
    const docs = [
      at(tenant("team-a", "team-b")),
      at(tenant("team-a", "team-a")),
      at(tenant(DEFAULT_OPERATOR_NAMESPACE, "team-c")),
      at({ apiVersion: "v1", kind: "List", items: [tenant("team-x", "team-y")] }),
    ];
    assert.equal(DEFAULT_OPERATOR_NAMESPACE, "platform-operator-system");
    const message = TENANT_POLICY.rules[0]?.message;
    assert.deepEqual(
      admissionPolicyProblems(docs).map((p) => [p.object, p.key, p.message]),
      [
        ["OpenBaoTenant team-a/t", "validate-openbaotenant", message],
        ["OpenBaoTenant team-x/t", "validate-openbaotenant", message],
      ],
    );
    // Told the operator runs in team-a: its tenant may onboard team-b; the default namespace's may not.
    assert.deepEqual(
      admissionPolicyProblems(docs, "team-a").map((p) => p.object),
      ["OpenBaoTenant platform-operator-system/t", "OpenBaoTenant team-x/t"],
    );
  });

  it("validate --operator-namespace: read only with --admission-policies", async () => {
    const { validateCommand } = await import("../../src/cli/validate.js");
    await assert.rejects(
      validateCommand(["-"], () => "{}", { operatorNamespace: "x" }),
      /--operator-namespace is read only with --admission-policies/,
    );
  });

  it("a delegation rule names its field and what the writer needs; offline (no authorizer) it admits", () => {
    for (const c of CASES.filter((x) => x.authz)) {
      const rule = c.table.rules.find((r) => r.id === c.rule)!;
      assert.ok(rule.needs && rule.field, rule.id);
      assert.ok(rule.message.startsWith(`${rule.field}: `), rule.message);
      assert.ok(rule.message.includes(rule.needs.startsWith("get") ? "needs get" : rule.needs), rule.message);
      const base = c.table.resource === "openbaorestores" ? RESTORE_BASE : CLUSTER_BASE;
      assert.ok(rule.admits({ object: { metadata: { name: "c" }, spec: { ...base, ...c.bad } } }), rule.id);
    }
  });

  it("a delegation rule asks only when its field changes: an editor without the verb may change the rest", () => {
    const [c] = CASES.filter((x) => x.rule === "verb-backup-image");
    const base = { metadata: { name: "c" }, spec: { ...CLUSTER_BASE, ...c!.bad } };
    const editor = caseAuthorizer(c!, false);
    const scaled = { ...base, spec: { ...base.spec, replicas: 5 } };
    assert.deepEqual(refusals(c!.table, { object: scaled, oldObject: base, authorizer: editor }), []);
    const changed = {
      ...base,
      spec: {
        ...base.spec,
        backup: { ...(base.spec["backup"] as object), image: "registry.example.com/other:2" },
      },
    };
    assert.deepEqual(
      refusals(c!.table, { object: changed, oldObject: base, authorizer: editor }).map((r) => r.id),
      ["verb-backup-image"],
    );
    // Taking the field away asks nothing.
    const dropped = {
      ...base,
      spec: { ...base.spec, backup: { ...(base.spec["backup"] as object), image: "" } },
    };
    assert.deepEqual(refusals(c!.table, { object: dropped, oldObject: base, authorizer: editor }), []);
  });

  it("the chart's copy of the rules is the table's (npm run policies:write)", () => {
    assert.equal(readFileSync(CHART_FILE, "utf8"), chartPolicyJson());
  });

  it("validate reports each refusal at the object's place, keyed by the policy", () => {
    const doc = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "c", namespace: "team-a" },
      spec: { ...CLUSTER_BASE, profile: "Hardened", replicas: 1 },
    };
    const problems = admissionPolicyProblems([{ file: "c.yaml", document: 1, line: 1, doc }]);
    assert.deepEqual(
      problems.map((p) => [p.object, p.key, p.message.split(" ").slice(0, 4).join(" ")]),
      [
        ["OpenBaoCluster team-a/c", "validate-openbaocluster", "profile Hardened: spec.tls.mode must"],
        ["OpenBaoCluster team-a/c", "validate-openbaocluster", "profile Hardened: spec.replicas must"],
      ],
    );
    assert.deepEqual(admissionPolicyProblems([{ file: "c.yaml", doc: { ...doc, spec: CLUSTER_BASE } }]), []);
  });

  it("validate --admission-policies fails a manifest the plain run passes", async () => {
    const { validateCommand } = await import("../../src/cli/validate.js");
    const manifest = JSON.stringify({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name: "r", namespace: "team-a" },
      spec: { ...RESTORE_BASE, tokenSecretRef: { name: "c-root-token" } },
    });
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const errWrite = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((chunk: string) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      assert.equal(await validateCommand(["-"], () => manifest), 0);
      assert.equal(await validateCommand(["-"], () => manifest, { admissionPolicies: true }), 1);
    } finally {
      process.stdout.write = write;
      process.stderr.write = errWrite;
    }
    assert.match(
      out.join(""),
      /validate-openbaorestore: an OpenBaoRestore may not refer to the operator's own Secrets/,
    );
  });

  it("the start-up check's summary names each dependency and its issue", () => {
    assert.deepEqual(summarize([]), { ready: true, issues: [], summary: "" });
    assert.equal(
      summarize([
        { dependency: "po-validate-openbaocluster", issue: "binding not found" },
        {
          dependency: "po-lock-managed-resource-mutations",
          issue: "policy failurePolicy is Ignore, not Fail",
        },
      ]).summary,
      "Admission policies are not ready: po-validate-openbaocluster: binding not found | po-lock-managed-resource-mutations: policy failurePolicy is Ignore, not Fail",
    );
  });

  it("the target's configuration takes the chart's prefix, and nothing else under admissionPolicies", () => {
    assert.equal(
      parseOpenBaoConfig({ admissionPolicies: { prefix: "po-" } }, "t").admissionPolicyPrefix,
      "po-",
    );
    assert.equal(parseOpenBaoConfig({}, "t").admissionPolicyPrefix, undefined);
    assert.throws(() => parseOpenBaoConfig({ admissionPolicies: { other: 1 } }, "t"), /admissionPolicies/);
  });
});
