import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { raftView } from "../../src/targets/openbao/adminops/upgrade/bluegreen/observe.js";
import type { AutopilotState } from "../../src/targets/openbao/adminops/upgrade/raftops/client.js";

const blue = ["demo-0", "demo-1", "demo-2"];
const green = ["demo-r2-0", "demo-r2-1", "demo-r2-2"];
const state = (voters: string[], nonVoters: string[], leader = "demo-0"): AutopilotState => ({
  healthy: true,
  failureTolerance: 1,
  leader,
  voters,
  nonVoters,
  servers: {},
});

describe("blue-green Raft view: when the leader may step down", () => {
  it("a blue follower marked for demotion but still in voters keeps its vote, so no step-down yet", () => {
    // Right after sys/storage/raft/demote: listed as non-voters, Autopilot has not demoted them.
    const marked = raftView(state([...blue, ...green], blue), { blue, green });
    assert.equal(marked.leaderSideFollowersVote, true);
    assert.equal(marked.blueDemoted, false);
  });

  it("once Autopilot demoted them only the leader of blue votes: the step-down can only elect green", () => {
    const done = raftView(state(["demo-0", ...green], blue), { blue, green });
    assert.equal(done.leaderSideFollowersVote, false);
    assert.equal(done.leaderOnBlue, true);
  });
});
