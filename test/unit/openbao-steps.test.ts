import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import { fail, invalid, wait } from "../../src/runtime/stages.js";
import { stageResult } from "../../src/runtime/stages-settle.js";
import {
  blockedOf,
  reportOf,
  WORKLOAD_STEP_REPORTS,
  WORKLOAD_STEPS,
} from "../../src/targets/openbao/steps/index.js";

describe("openbao workload steps", () => {
  it("run in the spec's order, each under its own name", () => {
    assert.deepEqual(WORKLOAD_STEPS.names, [
      "validate",
      "certificates",
      "images",
      "infrastructure",
      "storage",
      "lost-data",
      "initialization",
      "autopilot",
    ]);
    assert.equal(new Set(WORKLOAD_STEPS.names).size, WORKLOAD_STEPS.names.length);
    // The status names the step a pass stopped at; the lost-data guard reports under the
    // initialization it guards.
    assert.deepEqual(
      WORKLOAD_STEPS.names.map((n) => reportOf(n).step),
      [
        "validate",
        "certificates",
        "images",
        "infrastructure",
        "storage",
        "initialization",
        "initialization",
        "autopilot",
      ],
    );
    assert.deepEqual(Object.keys(WORKLOAD_STEP_REPORTS).sort(), [...WORKLOAD_STEPS.names].sort());
  });

  it("an error thrown in a step takes that step's reason, chosen by its unique name", () => {
    assert.equal(reportOf("lost-data").errorReason, OpenBaoClusterReason.InitializationFailed);
    assert.equal(reportOf("initialization").errorReason, OpenBaoClusterReason.InitializationFailed);
    for (const n of ["validate", "certificates", "images", "infrastructure", "storage", "autopilot"])
      assert.equal(reportOf(n).errorReason, OpenBaoClusterReason.ReconcileError, n);
  });

  it("a wait is reported as waiting and looked at again; a failure is Degraded and retried; an invalid spec waits for a change", () => {
    const waiting = { ...wait(OpenBaoClusterReason.TLSSecretMissing, "no secret"), stage: "certificates" };
    assert.deepEqual(blockedOf(waiting), {
      step: "certificates",
      reason: "TLSSecretMissing",
      message: "no secret",
      failed: false,
    });
    assert.deepEqual(stageResult(waiting, { waitAfterMs: 7000, doneAfterMs: 9000 }), {
      requeueAfterMs: 7000,
    });

    const failed = { ...fail(OpenBaoClusterReason.DataLost, "gone"), stage: "lost-data" };
    assert.deepEqual(blockedOf(failed), {
      step: "initialization",
      reason: "DataLost",
      message: "gone",
      failed: true,
    });
    assert.deepEqual(stageResult(failed, { waitAfterMs: 7000 }), { retryReason: "DataLost" });

    const bad = { ...invalid(OpenBaoClusterReason.InvalidSpec, "spec.x: no"), stage: "validate" };
    assert.equal(blockedOf(bad)?.failed, true);
    assert.deepEqual(stageResult(bad, { waitAfterMs: 7000 }), { terminalReason: "InvalidSpec" });

    assert.equal(blockedOf({ kind: "done", context: {} as never }), undefined);
  });
});
