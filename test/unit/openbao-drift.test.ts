import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type DriftChange, MAX_NAMED_PER_ACTION, summarizeDrift } from "../../src/targets/openbao/drift.js";
import { driftedCondition, withoutDrifted } from "../../src/targets/openbao/observe.js";
import { driftOfChange } from "../../src/targets/openbao/workload/service-context.js";

describe("openbao observe-only drift", () => {
  it("summarizes by action in a fixed order, names sorted and counted once", () => {
    const changes: DriftChange[] = [
      { action: "initialize", what: "bao-0" },
      { action: "update", what: "StatefulSet/bao" },
      { action: "create", what: "Service/bao" },
      { action: "create", what: "ConfigMap/bao-config" },
      { action: "create", what: "Service/bao" },
      { action: "autopilot", what: "min_quorum" },
      { action: "remove-peer", what: "bao-4" },
      { action: "delete", what: "Ingress/bao" },
    ];
    assert.equal(
      summarizeDrift(changes),
      "2 create (ConfigMap/bao-config, Service/bao), 1 update (StatefulSet/bao), 1 delete (Ingress/bao), " +
        "1 initialize (bao-0), 1 remove-peer (bao-4), 1 autopilot (min_quorum)",
    );
    assert.equal(summarizeDrift([...changes].reverse()), summarizeDrift(changes));
    assert.equal(summarizeDrift([]), "");
  });

  it("caps the names per action", () => {
    const many = Array.from({ length: MAX_NAMED_PER_ACTION + 5 }, (_, i) => ({
      action: "create" as const,
      what: `Secret/s${String(i).padStart(2, "0")}`,
    }));
    const text = summarizeDrift(many);
    assert.match(text, /^25 create \(/);
    assert.match(text, /, and 5 more\)$/);
  });

  it("reads the services' change lines", () => {
    assert.deepEqual(driftOfChange("Service/bao would be created"), {
      action: "create",
      what: "Service/bao",
    });
    assert.deepEqual(driftOfChange("Secret/bao-tls would be updated"), {
      action: "update",
      what: "Secret/bao-tls",
    });
    assert.deepEqual(driftOfChange("Ingress/bao would be deleted"), {
      action: "delete",
      what: "Ingress/bao",
    });
    assert.deepEqual(driftOfChange("Ingress/bao deleted"), { action: "delete", what: "Ingress/bao" });
    assert.deepEqual(driftOfChange("Role/bao applied"), { action: "update", what: "Role/bao" });
    assert.equal(driftOfChange("something else"), undefined);
  });

  it("Drifted is True with the summary, False when nothing would change, and keeps its transition time", () => {
    const t0 = new Date("2026-01-01T00:00:00Z");
    const t1 = new Date("2026-01-01T00:05:00Z");
    const drifted = driftedCondition([], [{ action: "create", what: "Service/bao" }], 3, t0);
    assert.deepEqual(drifted, [
      {
        type: "Drifted",
        status: "True",
        reason: "ObserveOnly",
        message: "a real run would: 1 create (Service/bao)",
        observedGeneration: 3,
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ]);
    const again = driftedCondition(drifted, [{ action: "create", what: "Service/bao" }], 3, t1);
    assert.deepEqual(again, drifted);
    const clean = driftedCondition(drifted, [], 3, t1);
    assert.equal(clean[0]!.status, "False");
    assert.equal(clean[0]!.message, "a real run would change nothing");
    assert.equal(clean[0]!.lastTransitionTime, "2026-01-01T00:05:00Z");
    assert.deepEqual(withoutDrifted(clean), []);
  });
});
