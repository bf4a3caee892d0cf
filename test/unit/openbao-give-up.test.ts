import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OpenBaoClusterReason as R } from "../../src/apis/openbaocluster-names.js";
import { fail } from "../../src/runtime/stages.js";
import { countAttempts, withGiveUp } from "../../src/runtime/stages-attempts.js";
import {
  exhausted,
  recordStepFailure,
} from "../../src/targets/openbao/adminops/upgrade/bluegreen/attempts.js";
import { resolveSettings } from "../../src/targets/openbao/adminops/upgrade/bluegreen/settings.js";
import type { BlueGreenStatus } from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";
import type { UpgradeStatus } from "../../src/targets/openbao/adminops/upgrade/core/status.js";
import {
  attemptsOf,
  STEP,
  withoutLastError,
} from "../../src/targets/openbao/adminops/upgrade/rolling/record.js";

// The OpenBao operations that must stop after N failures count them through the pass kernel, over
// the status fields upstream names; these are the count and the decision, without a cluster.

describe("openbao give-up after N, counted by the kernel in upstream's status fields", () => {
  it("rolling upgrade: each failed step adds one to status.upgrade.consecutiveFailures; the N-th gives up", () => {
    const failed = { ...fail(R.StepDownFailed, new Error("503"), { giveUpAfter: 3 }), stage: STEP };
    let u: UpgradeStatus = { targetVersion: "2.7.2" };
    const counts: number[] = [];
    const ends: string[] = [];
    for (let i = 0; i < 3; i++) {
      const record = countAttempts(attemptsOf(u), failed);
      u = { ...u, consecutiveFailures: record?.attempts, lastErrorReason: "StepDownFailed" };
      counts.push(u.consecutiveFailures ?? 0);
      ends.push(withGiveUp(failed, record).kind);
    }
    assert.deepEqual(counts, [1, 2, 3]);
    assert.deepEqual(ends, ["fail", "fail", "invalid"], "retried twice, then final");
    // A step that went through clears the count: the next failure is the first again.
    assert.equal(attemptsOf(withoutLastError(u)), undefined);
    assert.equal(countAttempts(attemptsOf(withoutLastError(u)), failed)?.attempts, 1);
  });

  it("blue-green: maxJobFailures in a row within a phase exhausts it; the count is the phase's", () => {
    const s = resolveSettings({ maxJobFailures: 2 });
    let bg: BlueGreenStatus = { phase: "DemotingBlue", jobFailureCount: 0 };
    assert.equal(exhausted(bg, s), false);
    bg = recordStepFailure(bg, "step-down: 500");
    assert.equal(exhausted(bg, s), false, "one of two");
    bg = recordStepFailure(bg, "step-down: 500");
    assert.equal(bg.jobFailureCount, 2);
    assert.equal(exhausted(bg, s), true, "two of two");
    assert.equal(exhausted({ ...bg, jobFailureCount: 0 }, s), false, "a new phase starts at 0");
  });
});
