import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlueGreenPhase, OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { LABEL_REVISION } from "../../src/targets/openbao/identity.js";
import { workloadRelevant } from "../../src/targets/openbao/target.js";
import { clientService } from "../../src/targets/openbao/workload/network/plan.js";

const cluster = (bg?: NonNullable<OpenBaoCluster["status"]>["blueGreen"]): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", replicas: 3, storage: { size: "1Gi" } },
    status: bg ? { blueGreen: bg } : {},
  }) as OpenBaoCluster;

const selectorOf = (c: OpenBaoCluster) =>
  (clientService(c)["spec"] as { selector: Record<string, string> }).selector;
const upgrading = (phase: BlueGreenPhase) =>
  cluster({
    phase,
    greenRevision: "r2",
    greenImage: "openbao/openbao:2.7.2",
    blueImage: "openbao/openbao:2.6.2",
  });

describe("blue-green: the client Service and what wakes the workload controller", () => {
  it("the client Service selects every voter until green can take over, then green alone", () => {
    assert.equal(selectorOf(cluster())[LABEL_REVISION], undefined);
    for (const phase of ["DeployingGreen", "JoiningMesh", "Syncing", "Promoting", "RollingBack"] as const)
      assert.equal(selectorOf(upgrading(phase))[LABEL_REVISION], undefined, phase);
    for (const phase of ["DemotingBlue", "Cleanup"] as const)
      assert.equal(selectorOf(upgrading(phase))[LABEL_REVISION], "r2", phase);
    // Completed: the serving revision's pods, also while the next upgrade brings up its green.
    assert.equal(selectorOf(cluster({ phase: "Idle", blueRevision: "r2" }))[LABEL_REVISION], "r2");
    const next = cluster({ phase: "Syncing", blueRevision: "r2", greenRevision: "r3", greenImage: "x" });
    assert.equal(selectorOf(next)[LABEL_REVISION], "r2");
  });

  it("the workload controller wakes on a blue-green phase or revision change, not on its timestamps", () => {
    const a = upgrading("Syncing");
    assert.equal(workloadRelevant(a, upgrading("Promoting")), true);
    assert.equal(
      workloadRelevant(upgrading("Cleanup"), cluster({ phase: "Idle", blueRevision: "r2" })),
      true,
    );
    assert.equal(workloadRelevant(cluster(), upgrading("DeployingGreen")), true);
    const later = upgrading("Syncing");
    later.status!.blueGreen!.startTime = "2026-12-01T00:00:00Z";
    later.status!.blueGreen!.jobFailureCount = 2;
    assert.equal(workloadRelevant(a, later), false);
  });
});
