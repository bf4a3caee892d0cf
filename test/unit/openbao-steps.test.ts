import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OpenBaoClusterReason, type OpenBaoClusterReasonType } from "../../src/apis/openbaocluster-names.js";
import type { Pass, Step } from "../../src/targets/openbao/steps/index.js";
import { runSteps, WORKLOAD_STEPS } from "../../src/targets/openbao/steps/index.js";
import { initializationStep } from "../../src/targets/openbao/steps/initialization.js";
import { lostDataStep } from "../../src/targets/openbao/steps/lost-data.js";

describe("openbao workload steps", () => {
  it("run in the spec's order", () => {
    assert.deepEqual(
      WORKLOAD_STEPS.map((s) => s.name),
      // The lost-data guard reports under the initialization step it guards.
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
    assert.ok(WORKLOAD_STEPS.indexOf(lostDataStep) === WORKLOAD_STEPS.indexOf(initializationStep) - 1);
  });

  it("a step that stops the pass keeps the later ones from running, and says why", async () => {
    const ran: string[] = [];
    const step = (name: Step["name"], stop?: OpenBaoClusterReasonType): Step => ({
      name,
      async run() {
        ran.push(name);
        return stop ? { step: name, reason: stop, message: `${name} waits`, failed: false } : undefined;
      },
    });
    const seen: string[] = [];
    const out = await runSteps(
      {} as Pass,
      [step("certificates"), step("infrastructure", OpenBaoClusterReason.TLSSecretMissing), step("storage")],
      (s) => seen.push(s),
    );
    assert.deepEqual(ran, ["certificates", "infrastructure"]);
    assert.deepEqual(seen, ["certificates", "infrastructure"]);
    assert.deepEqual(out, {
      step: "infrastructure",
      reason: "TLSSecretMissing",
      message: "infrastructure waits",
      failed: false,
    });
  });

  it("an error names the step it came from", async () => {
    let at = "";
    const boom: Step = {
      name: "storage",
      async run() {
        throw new Error("claims unreadable");
      },
    };
    await assert.rejects(
      runSteps({} as Pass, [boom], (s) => {
        at = s;
      }),
      /claims unreadable/,
    );
    assert.equal(at, "storage");
  });

  it("all steps passing leaves nothing blocked", async () => {
    const ok: Step = { name: "validate", run: async () => undefined };
    assert.equal(await runSteps({} as Pass, [ok, ok], () => {}), undefined);
  });
});
