import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  forgetReleaseMetrics,
  publishReleaseMetrics,
  releaseInfo,
  releasePhase,
  upgradePending,
} from "../../src/targets/gitlab/release-metrics.js";

// One series per GitLabCore from the status a pass writes; a new version replaces the old series,
// deletion removes them all.

const valuesOf = async (
  g: { get(): Promise<{ values: { labels: object; value: number }[] }> },
  name: string,
) => (await g.get()).values.filter((v) => (v.labels as Record<string, string>)["name"] === name);

describe("gitlabcore per-release metrics", () => {
  it("version, phase and pending upgrade follow the status; forget removes every series", async () => {
    publishReleaseMetrics("ns", "gl", {
      phase: "Upgrading",
      version: "9.0.1",
      gitlabVersion: "18.0.1",
      targetVersion: "9.1.0",
    });
    assert.deepEqual(
      (await valuesOf(releaseInfo, "gl")).map((v) => [v.labels, v.value]),
      [[{ namespace: "ns", name: "gl", chart_version: "9.0.1", gitlab_version: "18.0.1" }, 1]],
    );
    const phases = Object.fromEntries(
      (await valuesOf(releasePhase, "gl")).map((v) => [
        (v.labels as Record<string, string>)["phase"],
        v.value,
      ]),
    );
    assert.deepEqual(phases, { Preparing: 0, Upgrading: 1, Running: 0, Failed: 0 });
    assert.equal((await valuesOf(upgradePending, "gl"))[0]?.value, 1);

    // The step applied: one info series, for the new versions; nothing pending.
    publishReleaseMetrics("ns", "gl", {
      phase: "Running",
      version: "9.1.0",
      gitlabVersion: "18.1.0",
      targetVersion: "9.1.0",
    });
    assert.deepEqual(
      (await valuesOf(releaseInfo, "gl")).map((v) => v.labels),
      [{ namespace: "ns", name: "gl", chart_version: "9.1.0", gitlab_version: "18.1.0" }],
    );
    assert.equal((await valuesOf(upgradePending, "gl"))[0]?.value, 0);

    // Another release is its own series and survives the first one's deletion.
    publishReleaseMetrics("ns", "other", { phase: "Preparing" });
    forgetReleaseMetrics("ns", "gl");
    for (const g of [releaseInfo, releasePhase, upgradePending])
      assert.deepEqual(await valuesOf(g, "gl"), []);
    assert.equal((await valuesOf(releasePhase, "other")).length, 4);
    assert.deepEqual(await valuesOf(releaseInfo, "other"), [], "nothing applied yet, no version series");
    forgetReleaseMetrics("ns", "other");
  });
});
