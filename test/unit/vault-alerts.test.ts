import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { registry } from "../../src/runtime/metrics.js";
import "../../src/targets/vault/metrics.js";

const file = fileURLToPath(
  new URL("../../../deploy/chart/platform-operator/rules/vault.yaml", import.meta.url),
);
const rule = parse(readFileSync(file, "utf8")) as {
  kind: string;
  spec: { groups: { rules: { alert: string; expr: string; for?: string }[] }[] };
};

describe("vault alert rules", () => {
  const rules = rule.spec.groups.flatMap((g) => g.rules);

  it("is a PrometheusRule with every alert the document lists", () => {
    assert.equal(rule.kind, "PrometheusRule");
    assert.deepEqual(rules.map((r) => r.alert).sort(), [
      "OhmlabBackendErrors",
      "OhmlabBackendForbidden",
      "OhmlabCRDRevisionMismatch",
      "OhmlabControllerDown",
      "OhmlabObjectNotReady",
      "OhmlabReconcileStale",
      "OhmlabRotationOverdue",
      "OhmlabWriteLoop",
    ]);
  });

  it("queries only metrics the operator exports (or Prometheus' own up)", async () => {
    const exported = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    for (const r of rules) {
      const names = r.expr.match(/\b(ohmlab_[a-z_]+|controller_runtime_[a-z_]+|workqueue_[a-z_]+)\b/g) ?? [];
      assert.ok(names.length > 0 || /\bup\{/.test(r.expr), `${r.alert} queries nothing known`);
      for (const n of names) assert.ok(exported.has(n), `${r.alert} uses ${n}, which is not exported`);
    }
  });
});
