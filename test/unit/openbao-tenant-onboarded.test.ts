import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoTenant } from "../../src/apis/openbaotenant.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import {
  onboardedBy,
  onboardedNamespaces,
  tenantMissing,
  watchedNamespaces,
} from "../../src/targets/openbao/tenant/onboarded.js";

const OP = "platform-operator";

const tenant = (namespace: string, target: string, status?: OpenBaoTenant["status"]): OpenBaoTenant => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoTenant",
  metadata: { name: `t-${target}`, namespace },
  spec: { targetNamespace: target },
  ...(status ? { status } : {}),
});

describe("openbao tenant mode: onboarded namespaces, watched namespaces, the wait", () => {
  it("counts only provisioned tenants the guard allows", () => {
    const got = onboardedNamespaces(
      [
        tenant(OP, "team-a", { provisioned: true }),
        tenant(OP, "team-b", { provisioned: false, lastError: "target namespace team-b not found" }),
        tenant(OP, "team-c"),
        tenant("team-d", "team-d", { provisioned: true }),
        // A status claiming provisioned for a target the guard refuses grants nothing.
        tenant("team-e", "team-f", { provisioned: true }),
        tenant(OP, "kube-system", { provisioned: true }),
      ],
      OP,
    );
    assert.deepEqual([...got].sort(), ["team-a", "team-d"]);
  });

  it("keeps a namespace while a provisioned tenant's later pass fails, until the tenant goes or moves", () => {
    const ok = tenant(OP, "team-a", { provisioned: true });
    const failing = tenant(OP, "team-a", {
      provisioned: false,
      lastError: "provisioning namespace team-a failed: …",
    });
    const first = onboardedBy([ok], OP);
    assert.deepEqual([...first], [[`${OP}/t-team-a`, "team-a"]]);
    assert.deepEqual([...onboardedBy([failing], OP, first).values()], ["team-a"], "kept");
    assert.deepEqual([...onboardedBy([failing], OP).values()], [], "never provisioned: not onboarded");
    assert.deepEqual([...onboardedBy([], OP, first).values()], [], "gone: offboarded");
    const moved = { ...failing, spec: { targetNamespace: "team-z" } };
    assert.deepEqual([...onboardedBy([moved], OP, first).values()], [], "names another namespace");
    assert.equal(tenantMissing("team-a", [failing], [], OP, first), undefined);
  });

  it("adds onboarded namespaces to a configured list, and leaves a cluster-wide target alone", () => {
    assert.deepEqual(watchedNamespaces(["z", "a"], new Set(["m", "a"])), ["a", "m", "z"]);
    assert.deepEqual(watchedNamespaces([], new Set()), []);
    assert.equal(watchedNamespaces(undefined, new Set(["m"])), undefined);
  });

  it("a cluster waits in a namespace no provisioned tenant onboards, and says what is missing", () => {
    const tenants = [
      tenant(OP, "team-a", { provisioned: true }),
      tenant(OP, "team-b", { provisioned: false, lastError: "target namespace team-b not found" }),
    ];
    assert.equal(tenantMissing("team-a", tenants, ["static"], OP), undefined);
    assert.equal(
      tenantMissing("static", tenants, ["static"], OP),
      undefined,
      "configured: granted by the chart",
    );
    assert.equal(
      tenantMissing("team-c", tenants, ["static"], OP),
      `namespace team-c is not onboarded: no OpenBaoTenant names it; create one in namespace ${OP} (or in team-c itself) with spec.targetNamespace: team-c`,
    );
    assert.equal(
      tenantMissing("team-b", tenants, undefined, OP),
      `namespace team-b is not onboarded: OpenBaoTenant ${OP}/t-team-b names it but is not provisioned (target namespace team-b not found)`,
    );
    // Cluster-wide (no list): every namespace needs its tenant.
    assert.match(tenantMissing("static", tenants, undefined, OP) ?? "", /no OpenBaoTenant names it/);
  });

  it("takes a cluster selector for tenant mode and refuses a bad one naming the field", () => {
    const c = parseOpenBaoConfig(
      { tenants: { enabled: true, serviceAccount: "sa", clusterSelector: "team=a" } },
      "targets.openbao",
    );
    assert.equal(c.tenants?.clusterSelector, "team=a");
    assert.throws(
      () =>
        parseOpenBaoConfig(
          { tenants: { enabled: true, serviceAccount: "sa", clusterSelector: "a b c" } },
          "targets.openbao",
        ),
      /targets\.openbao\.tenants\.clusterSelector/,
    );
  });
});
