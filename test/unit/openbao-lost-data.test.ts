import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AcknowledgeDataLossAnnotation } from "../../src/apis/openbaocluster-names.js";
import { judgeLostData, type LostDataFacts } from "../../src/targets/openbao/workload/init/lost-data.js";

const lost: LostDataFacts = {
  initializedBy: "status",
  pod0Initialized: false,
  peerInitialized: false,
  pod0: "bao-0",
  claim: { name: "data-bao-0", uid: "u-new" },
  rootTokenSecret: "bao-root-token",
  acknowledgement: undefined,
};

describe("openbao lost-data guard (pure)", () => {
  it("initialized before, pod 0 uninitialized, no peer: lost, naming the claim uid to acknowledge", () => {
    const v = judgeLostData(lost);
    assert.equal(v.kind, "lost");
    assert.match(v.kind === "lost" ? v.message : "", /the status says OpenBao was initialized/);
    assert.ok(v.kind === "lost" && v.message.includes(`${AcknowledgeDataLossAnnotation}=u-new`));
    const byToken = judgeLostData({ ...lost, initializedBy: "root-token Secret" });
    assert.match(byToken.kind === "lost" ? byToken.message : "", /the root-token Secret says/);
  });

  it("first boot, pod 0 initialized, an unanswered pod 0 or an initialized peer: intact", () => {
    assert.equal(judgeLostData({ ...lost, initializedBy: undefined }).kind, "intact");
    assert.equal(judgeLostData({ ...lost, pod0Initialized: true }).kind, "intact");
    assert.equal(judgeLostData({ ...lost, pod0Initialized: undefined }).kind, "intact");
    assert.equal(judgeLostData({ ...lost, peerInitialized: true }).kind, "intact");
  });

  it("only the current claim's uid acknowledges; another uid says so", () => {
    assert.equal(judgeLostData({ ...lost, acknowledgement: "u-new" }).kind, "acknowledged");
    const old = judgeLostData({ ...lost, acknowledgement: "u-old" });
    assert.equal(old.kind, "lost");
    assert.match(old.kind === "lost" ? old.message : "", /names another claim/);
    const noClaim = judgeLostData({ ...lost, claim: undefined, acknowledgement: "u-new" });
    assert.equal(noClaim.kind, "lost");
  });
});
