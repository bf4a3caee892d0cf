import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { lowestVersion } from "../../src/targets/openbao/adminops/upgrade/core/manager.js";
import type {
  ClusterObservation,
  VoterObservation,
} from "../../src/targets/openbao/adminops/upgrade/core/observe.js";
import {
  compareVersions,
  decideVersion,
  sameVersionText,
} from "../../src/targets/openbao/adminops/upgrade/core/policy.js";
import {
  checkUpgradePrerequisites,
  type UpgradeFacts,
} from "../../src/targets/openbao/adminops/upgrade/core/prerequisites.js";
import { markHandled, pendingRequest } from "../../src/targets/openbao/adminops/upgrade/core/requests.js";
import { planRolling, type UpgradeStatus } from "../../src/targets/openbao/adminops/upgrade/rolling/plan.js";
import { workloadRelevant } from "../../src/targets/openbao/target.js";
import { parseVersion } from "../../src/targets/openbao/validate/values.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import { voterPartition } from "../../src/targets/openbao/workload/statefulsets/partition.js";

const v = (s: string) => parseVersion(s)!;

describe("upgrade version and image policy", () => {
  it("orders versions by semantic-version precedence", () => {
    assert.equal(compareVersions(v("2.7.2"), v("2.6.2")), 1);
    assert.equal(compareVersions(v("2.6.10"), v("2.6.9")), 1);
    assert.equal(compareVersions(v("v2.7.2"), v("2.7.2+build.1")), 0);
    assert.equal(compareVersions(v("2.7.0-rc.1"), v("2.7.0")), -1);
    assert.equal(compareVersions(v("2.7.0-rc.2"), v("2.7.0-rc.10")), -1);
    assert.equal(compareVersions(v("2.7.0-alpha"), v("2.7.0-alpha.1")), -1);
    assert.equal(compareVersions(v("2.7.0-beta"), v("2.7.0-alpha")), 1);
  });

  it("a newer spec.version is an upgrade from the running version", () => {
    assert.deepEqual(decideVersion({ specVersion: "2.7.2", currentVersion: "v2.6.2" }), {
      kind: "upgrade",
      from: "2.6.2",
      to: "2.7.2",
    });
  });

  it("an older spec.version is DowngradeBlocked, naming both versions", () => {
    const d = decideVersion({ specVersion: "2.6.2", currentVersion: "2.7.2" });
    assert.equal(d.kind, "refused");
    assert.equal((d as { reason: string }).reason, "DowngradeBlocked");
    assert.match(
      (d as { message: string }).message,
      /spec\.version 2\.6\.2 is older than the running 2\.7\.2/,
    );
  });

  it("the same version (v prefix and build metadata aside) is NoUpgradeNeeded, shown as upstream's Idle", () => {
    for (const current of ["2.7.2", "v2.7.2", "2.7.2+abc"]) {
      const d = decideVersion({ specVersion: "2.7.2", currentVersion: current });
      assert.equal(d.kind, "none", current);
      assert.equal((d as { reason: string }).reason, "Idle");
    }
    // Nothing observed yet (a fresh cluster): nothing to upgrade from.
    assert.equal(decideVersion({ specVersion: "2.7.2" }).kind, "none");
  });

  it("a version that is not semver is InvalidVersion, naming the field", () => {
    const d = decideVersion({ specVersion: "latest", currentVersion: "2.6.2" });
    assert.deepEqual(
      { kind: d.kind, reason: (d as { reason: string }).reason },
      { kind: "refused", reason: "InvalidVersion" },
    );
    assert.match((d as { message: string }).message, /spec\.version "latest"/);
    const bad = decideVersion({ specVersion: "2.7.2", currentVersion: "weird" });
    assert.match((bad as { message: string }).message, /status\.currentVersion/);
  });

  it("an image tag that disagrees with spec.version gets the workload validation's reason", () => {
    const d = decideVersion({
      specVersion: "2.7.2",
      specImage: "openbao/openbao:2.6.2",
      currentVersion: "2.6.2",
    });
    assert.equal(d.kind, "refused");
    assert.equal((d as { reason: string }).reason, "InvalidSpec");
    assert.match(
      (d as { message: string }).message,
      /^spec\.image: tag 2\.6\.2 is another version than spec\.version 2\.7\.2/,
    );
    // A tag naming the same version, a digest or a flavour tag is fine.
    for (const image of [
      "openbao/openbao:2.7.2",
      "openbao/openbao@sha256:" + "a".repeat(64),
      "r/o:2.7.2-ubi",
    ])
      assert.equal(
        decideVersion({ specVersion: "2.7.2", specImage: image, currentVersion: "2.6.2" }).kind,
        "upgrade",
        image,
      );
  });

  it("sameVersionText compares versions, not strings", () => {
    assert.ok(sameVersionText("v2.7.2", "2.7.2"));
    assert.ok(!sameVersionText("2.7.2", "2.7.3"));
    assert.ok(!sameVersionText(undefined, "2.7.2"));
  });
});

describe("upgrade requests bookkeeping", () => {
  const spec = (retry?: string) =>
    ({
      version: "2.7.2",
      upgrade: retry === undefined ? {} : { requests: { retry } },
    }) as OpenBaoCluster["spec"];

  it("a value acts once: pending until recorded as handled, then not again", () => {
    assert.equal(pendingRequest(spec("r1"), undefined, "retry"), "r1");
    const handled = markHandled(undefined, "retry", "r1");
    assert.deepEqual(handled, { lastHandledRetry: "r1" });
    assert.equal(pendingRequest(spec("r1"), handled, "retry"), undefined);
    assert.equal(pendingRequest(spec("r2"), handled, "retry"), "r2");
  });

  it("an unset or empty request never acts, and kinds are independent", () => {
    assert.equal(pendingRequest(spec(), undefined, "retry"), undefined);
    assert.equal(pendingRequest(spec(""), undefined, "retry"), undefined);
    const handled = markHandled({ lastHandledPromote: "p1" }, "retry", "r1");
    assert.deepEqual(handled, { lastHandledPromote: "p1", lastHandledRetry: "r1" });
    assert.equal(pendingRequest(spec("r1"), handled, "promote"), undefined);
  });
});

describe("upgrade prerequisites", () => {
  const healthy: UpgradeFacts = {
    initialized: true,
    replicas: 3,
    voters: [0, 1, 2].map((ordinal) => ({ ordinal, ready: true, sealed: false })),
    tokenAvailable: true,
    holder: "upgrade/c/from-2.6.2",
  };
  it("a healthy, initialized cluster with a free lock may start", () => {
    assert.deepEqual(checkUpgradePrerequisites(healthy), { ok: true });
    assert.deepEqual(
      checkUpgradePrerequisites({ ...healthy, lock: { operation: "Upgrade", holder: healthy.holder } }),
      { ok: true },
    );
  });
  it("each missing piece has its reason", () => {
    const cases: [Partial<UpgradeFacts>, string, RegExp][] = [
      [{ initialized: false }, "ClusterNotReady", /status\.initialized/],
      [{ voters: healthy.voters.slice(0, 2) }, "PodNotReady", /pod\(s\) 2 of 3/],
      [
        { voters: [{ ordinal: 0, ready: true }, ...healthy.voters.slice(1)] },
        "HealthCheckFailed",
        /pod\(s\) 0/,
      ],
      [
        { voters: [{ ordinal: 0, ready: true, sealed: true }, ...healthy.voters.slice(1)] },
        "Sealed",
        /pod\(s\) 0/,
      ],
      [{ tokenAvailable: false }, "AuthenticationRequired", /spec\.upgrade\.tokenSecretRef/],
      [{ lock: { operation: "Backup", holder: "backup/c/w" } }, "OperationLockHeld", /backup\/c\/w/],
    ];
    for (const [patch, reason, message] of cases) {
      const r = checkUpgradePrerequisites({ ...healthy, ...patch });
      assert.equal(r.ok, false, reason);
      assert.equal((r as { reason: string }).reason, reason);
      assert.match((r as { message: string }).message, message);
    }
  });
});

describe("rolling plan", () => {
  const NOW = new Date("2026-12-01T12:00:00Z");
  const voter = (
    ordinal: number,
    rev: string,
    version: string,
    patch: Partial<VoterObservation> = {},
  ): VoterObservation => ({
    ordinal,
    name: `c-${ordinal}`,
    exists: true,
    ready: true,
    terminating: false,
    revision: rev,
    sealed: false,
    version,
    ...patch,
  });
  const obs = (voters: VoterObservation[], patch: Partial<ClusterObservation> = {}): ClusterObservation => ({
    replicas: 3,
    currentRevision: "old",
    updateRevision: "new",
    voters,
    leaderOrdinal: 0,
    raftHealthy: true,
    ...patch,
  });
  const up = (patch: Partial<UpgradeStatus> = {}): UpgradeStatus => ({
    targetVersion: "2.7.2",
    fromVersion: "2.6.2",
    currentPartition: 3,
    completedPods: [],
    ...patch,
  });
  const allOld = [0, 1, 2].map((i) => voter(i, "old", "2.6.2"));
  const plan = (u: UpgradeStatus, o: ClusterObservation) =>
    planRolling({ upgrade: u, obs: o, now: NOW, stepDownSettleMs: 20_000 });

  it("starts at the highest ordinal: partition 3 → 2", () => {
    assert.deepEqual(plan(up(), obs(allOld)), { kind: "lower-partition", to: 2 });
  });

  it("a pod being replaced, not Ready, sealed or on the old version is waiting, not failing", () => {
    const cases: [VoterObservation, RegExp][] = [
      [voter(2, "old", "2.6.2", { terminating: true }), /being replaced/],
      [voter(2, "old", "2.6.2"), /runs revision old, not new/],
      [voter(2, "new", "2.7.2", { ready: false }), /not Ready/],
      [voter(2, "new", "2.7.2", { sealed: undefined }), /health check/],
      [voter(2, "new", "2.6.2"), /reports version 2\.6\.2, not 2\.7\.2/],
    ];
    for (const [v2, message] of cases) {
      const s = plan(up({ currentPartition: 2 }), obs([allOld[0]!, allOld[1]!, v2]));
      assert.equal(s.kind, "wait");
      assert.match((s as { message: string }).message, message);
    }
    const exists = plan(
      up({ currentPartition: 2 }),
      obs([allOld[0]!, allOld[1]!, { ...voter(2, "new", "2.7.2"), exists: false }]),
    );
    assert.equal(exists.kind, "wait");
  });

  it("a replaced pod counts as done only once Autopilot says Raft is healthy", () => {
    const voters = [allOld[0]!, allOld[1]!, voter(2, "new", "2.7.2")];
    assert.equal(plan(up({ currentPartition: 2 }), obs(voters, { raftHealthy: false })).kind, "wait");
    assert.equal(plan(up({ currentPartition: 2 }), obs(voters, { raftHealthy: undefined })).kind, "wait");
    assert.deepEqual(plan(up({ currentPartition: 2 }), obs(voters)), { kind: "complete-pod", ordinal: 2 });
  });

  it("the next pod is the leader: it steps down first, then waits for another leader", () => {
    const voters = [allOld[0]!, allOld[1]!, voter(2, "new", "2.7.2")];
    const u = up({ currentPartition: 2, completedPods: [2] });
    assert.deepEqual(plan(u, obs(voters, { leaderOrdinal: 1 })), { kind: "step-down", ordinal: 1 });
    const asked = up({ currentPartition: 2, completedPods: [2], lastStepDownTime: "2026-12-01T11:59:50Z" });
    assert.equal(plan(asked, obs(voters, { leaderOrdinal: 1 })).kind, "wait");
    // Asked long ago and still leader: ask again.
    const stale = up({ currentPartition: 2, completedPods: [2], lastStepDownTime: "2026-12-01T11:50:00Z" });
    assert.deepEqual(plan(stale, obs(voters, { leaderOrdinal: 1 })), { kind: "step-down", ordinal: 1 });
    // Leadership moved: the partition goes down.
    assert.deepEqual(plan(asked, obs(voters, { leaderOrdinal: 0 })), { kind: "lower-partition", to: 1 });
    assert.deepEqual(plan(asked, obs(voters, { leaderOrdinal: 2 })), { kind: "lower-partition", to: 1 });
    assert.equal(plan(u, obs(voters, { leaderOrdinal: undefined })).kind, "wait");
  });

  it("a single voter is replaced as the leader: stepping down would only re-elect it", () => {
    const lone = obs([voter(0, "old", "2.6.2")], { replicas: 1, leaderOrdinal: 0 });
    assert.deepEqual(plan(up({ currentPartition: 1 }), lone), { kind: "lower-partition", to: 0 });
    // Two voters: the other can lead, so the leader still steps down first.
    const two = obs([voter(0, "old", "2.6.2"), voter(1, "new", "2.7.2")], { replicas: 2, leaderOrdinal: 0 });
    assert.deepEqual(plan(up({ currentPartition: 1, completedPods: [1] }), two), {
      kind: "step-down",
      ordinal: 0,
    });
  });

  it("a replaced pod that falls over again stops the next step", () => {
    const voters = [allOld[0]!, allOld[1]!, voter(2, "new", "2.7.2", { ready: false })];
    const s = plan(up({ currentPartition: 2, completedPods: [2] }), obs(voters, { leaderOrdinal: 0 }));
    assert.equal(s.kind, "wait");
  });

  it("after pod 0, finalizes only when the StatefulSet and every voter converged", () => {
    const allNew = [0, 1, 2].map((i) => voter(i, "new", "2.7.2"));
    const u = up({ currentPartition: 0, completedPods: [2, 1, 0] });
    assert.equal(plan(u, obs(allNew)).kind, "wait", "currentRevision still old");
    assert.deepEqual(plan(u, obs(allNew, { currentRevision: "new" })), { kind: "finalize" });
    const lagging = [
      voter(0, "new", "2.7.2"),
      voter(1, "new", "2.7.2", { version: "2.6.2" }),
      voter(2, "new", "2.7.2"),
    ];
    assert.equal(plan(u, obs(lagging, { currentRevision: "new" })).kind, "wait");
    assert.equal(plan(u, obs(allNew, { currentRevision: "new", raftHealthy: false })).kind, "wait");
  });

  it("resumes from status alone: a completed pod is never replaced again", () => {
    // Killed after pod 2 was recorded done; the next process sees partition 2 and pod 2 completed.
    const voters = [allOld[0]!, allOld[1]!, voter(2, "new", "2.7.2")];
    assert.deepEqual(plan(up({ currentPartition: 2, completedPods: [2] }), obs(voters)), {
      kind: "lower-partition",
      to: 1,
    });
    // Killed after lowering to 1, before pod 1 was replaced: it waits for pod 1, nothing else.
    const s = plan(up({ currentPartition: 1, completedPods: [2] }), obs(voters));
    assert.equal(s.kind, "wait");
    assert.equal((s as { ordinal?: number }).ordinal, 1);
  });

  it("deletes a pod of a given-up target that cannot start, and nothing that may still recover", () => {
    // Retargeted while pod 2 ran a revision whose image cannot be pulled: the roll starts again at
    // partition 3, and the StatefulSet would wait for that pod to become Ready forever.
    const stuck = voter(2, "abandoned", "2.7.1", { ready: false, stuck: true, sealed: undefined });
    assert.deepEqual(plan(up(), obs([allOld[0]!, allOld[1]!, stuck])), {
      kind: "replace-stuck-pod",
      ordinal: 2,
    });
    // Not stuck (still pulling, starting): waited for, as before.
    const starting = { ...stuck, stuck: false };
    assert.equal(plan(up(), obs([allOld[0]!, allOld[1]!, starting])).kind, "wait");
    // Stuck on the current or the update revision: the StatefulSet's own to handle, not deleted.
    for (const rev of ["old", "new"])
      assert.notEqual(
        plan(up(), obs([allOld[0]!, allOld[1]!, { ...stuck, revision: rev }])).kind,
        "replace-stuck-pod",
      );
    // Already going: left alone.
    assert.notEqual(
      plan(up(), obs([allOld[0]!, allOld[1]!, { ...stuck, terminating: true }])).kind,
      "replace-stuck-pod",
    );
  });

  it("lowestVersion needs every voter's answer", () => {
    assert.equal(
      lowestVersion(obs([voter(0, "x", "2.7.2"), voter(1, "x", "2.6.2"), voter(2, "x", "2.7.2")])),
      "2.6.2",
    );
    assert.equal(
      lowestVersion(obs([voter(0, "x", "2.7.2"), { ...voter(1, "x", "2.6.2"), version: undefined }])),
      undefined,
    );
  });
});

describe("voter partition rule (workload side of a rolling upgrade)", () => {
  const base = { replicas: 3, specVersion: "2.7.2" };
  it("no upgrade: 0, so template changes roll as usual; nothing observed yet holds nothing", () => {
    assert.equal(voterPartition({ ...base, currentVersion: "2.7.2" }), 0);
    assert.equal(voterPartition({ ...base, currentVersion: "v2.7.2+meta" }), 0);
    assert.equal(voterPartition(base), 0);
  });
  it("a version change no upgrade took up yet holds every pod (a new image never rolls by itself)", () => {
    assert.equal(voterPartition({ ...base, currentVersion: "2.6.2" }), 3);
    // A refused downgrade is held the same way: no pod changes.
    assert.equal(voterPartition({ ...base, specVersion: "2.6.2", currentVersion: "2.7.2" }), 3);
  });
  it("an upgrade in flight steers the partition, clamped to [0, replicas]", () => {
    const up = (currentPartition: number) => ({ targetVersion: "2.7.2", currentPartition });
    assert.equal(voterPartition({ ...base, currentVersion: "2.6.2", upgrade: up(2) }), 2);
    assert.equal(voterPartition({ ...base, currentVersion: "2.6.2", upgrade: up(0) }), 0);
    assert.equal(voterPartition({ ...base, currentVersion: "2.6.2", upgrade: up(7) }), 3);
  });
  it("the spec moved away from the upgrade's target: every pod held until the manager decides", () => {
    assert.equal(
      voterPartition({
        ...base,
        specVersion: "2.6.2",
        currentVersion: "2.6.2",
        upgrade: { targetVersion: "2.7.2", currentPartition: 1 },
      }),
      3,
    );
  });
  it("the workload wakes on the partition and target, not on other status changes", () => {
    const c = (status: Record<string, unknown>) =>
      ({
        metadata: { name: "c", generation: 1 },
        spec: { version: "2.7.2" },
        status,
      }) as unknown as OpenBaoCluster;
    assert.ok(workloadRelevant(c({}), c({ upgrade: { currentPartition: 2 } })));
    assert.ok(
      !workloadRelevant(
        c({ upgrade: { currentPartition: 2 } }),
        c({ upgrade: { currentPartition: 2, completedPods: [2] } }),
      ),
    );
    assert.ok(!workloadRelevant(c({ readyReplicas: 1 }), c({ readyReplicas: 2 })));
  });
  it("the StatefulSet carries the partition only when it is above 0", () => {
    const sts = (partition?: number) =>
      (
        buildStatefulSet(
          {
            metadata: { name: "c", namespace: "ns" },
            spec: { version: "2.7.2", storage: { size: "1Gi" } },
          } as unknown as OpenBaoCluster,
          {
            component: "server",
            replicas: 3,
            configHash: "h",
            clusterDomain: "cluster.local",
            runtime: { command: [], args: [], volumes: [], volumeMounts: [] },
            partition,
          },
        ) as { spec: { updateStrategy: unknown } }
      ).spec.updateStrategy;
    assert.deepEqual(sts(), { type: "RollingUpdate" });
    assert.deepEqual(sts(0), { type: "RollingUpdate" });
    assert.deepEqual(sts(2), { type: "RollingUpdate", rollingUpdate: { partition: 2 } });
  });
});
