import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { describeGitLab, gitlabSampleForLocalNode } from "../../src/cli/dev-gitlab.js";
import { PodSummary } from "../../src/cli/pod-summary.js";
import type { KubeObject } from "../../src/runtime/types.js";

const SAMPLE = fileURLToPath(new URL("../../../deploy/samples/gitlabcore.yaml", import.meta.url));

describe("npm start's gitlab part", () => {
  it("adjusts the GitLabCore sample for the node and names every change", () => {
    const sample = parse(readFileSync(SAMPLE, "utf8")) as KubeObject;
    const { doc, changes } = gitlabSampleForLocalNode(sample);
    const spec = doc["spec"] as Record<string, unknown>;
    assert.equal(spec["networking"], undefined);
    assert.deepEqual(
      spec["version"],
      { type: "Static", version: "10.4.0" },
      "the sample's own, in the fixture",
    );
    assert.deepEqual(changes, [
      "spec.networking left out (no Gateway API, GatewayClass or cert-manager on the node)",
    ]);
    assert.ok((sample["spec"] as Record<string, unknown>)["networking"], "the sample itself is untouched");
    const other = gitlabSampleForLocalNode({ ...sample, spec: { version: { type: "Latest" } } });
    assert.match(other.changes[0]!, /^spec\.version → Static 11\.0\.0 \(the bundled fixture chart's newest/);
  });

  it("prints a GitLabCore's progress once per step", () => {
    const a = { targetVersion: "10.4.0", phase: "Preparing" };
    const b = { ...a, initialized: "ChartRendered (hooks of chart 10.4.0 completed)", version: "10.4.0" };
    assert.deepEqual(describeGitLab({}, a), ["version resolved: chart 10.4.0", "phase Preparing"]);
    assert.deepEqual(describeGitLab(a, b), [
      "hooks: ChartRendered (hooks of chart 10.4.0 completed)",
      "objects applied: chart 10.4.0",
    ]);
    assert.deepEqual(describeGitLab(b, b), [], "nothing new, nothing printed");
  });

  it("summarises pod changes per namespace, printing a namespace only when its pods look different", () => {
    const s = new PodSummary();
    for (const l of [
      "ADDED     openbao   secrets-0   0/1   Pending             0     0s",
      "MODIFIED  openbao   secrets-0   0/1   ContainerCreating   0     1s",
      "MODIFIED  openbao   secrets-0   1/1   Running             0     3s",
      "ADDED     openbao   secrets-1   0/1   Pending             0     0s",
      "ADDED     gitlab    gl-job-x    0/1   Completed           0     9s",
    ])
      s.observe(l);
    assert.deepEqual(s.flush(), [
      "pods gitlab: gl-job-x Completed 0/1",
      "pods openbao: secrets-0 Running 1/1, secrets-1 Pending 0/1",
    ]);
    s.observe("MODIFIED  openbao   secrets-1   0/1   Pending   0   1s");
    assert.deepEqual(s.flush(), [], "the same picture is not printed twice");
    s.observe("DELETED   gitlab    gl-job-x    0/1   Completed   0   10s");
    assert.deepEqual(s.flush(), ["pods gitlab: none"]);
  });
});
