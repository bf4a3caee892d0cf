import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import { nextStatus, type PassResult } from "../../src/targets/openbao/status.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import {
  type ClaimView,
  type PodView,
  planStorage,
  type StoragePlanInput,
} from "../../src/targets/openbao/workload/storage/plan.js";

// The storage step's decisions, from observed claims and pods only: refusals with upstream's
// reasons, growth of each claim, and the one-at-a-time restart a pending file-system resize needs.

const PENDING = "2026-12-01T10:00:00Z";
const BEFORE = "2026-12-01T09:00:00Z";
const AFTER = "2026-12-01T10:05:00Z";

const claim = (i: number, over: Partial<ClaimView> = {}): ClaimView => ({
  name: `data-bao-${i}`,
  request: "2Gi",
  capacity: "1Gi",
  ...over,
});
const pod = (i: number, over: Partial<PodView> = {}): PodView => ({
  name: `bao-${i}`,
  uid: `uid-${i}`,
  creationTimestamp: BEFORE,
  ready: true,
  deleting: false,
  ...over,
});
const input = (over: Partial<StoragePlanInput> = {}): StoragePlanInput => ({
  specSize: "2Gi",
  templateSize: "1Gi",
  replicas: 3,
  claimOf: (p) => `data-${p}`,
  ...over,
});
const pendingClaims = () => [0, 1, 2].map((i) => claim(i, { fsResizePendingSince: PENDING }));

describe("openbao storage plan", () => {
  it("does nothing (and lists nothing) while the size is the template's", () => {
    assert.deepEqual(planStorage(input({ specSize: "1Gi" })), { kind: "none" });
    assert.deepEqual(planStorage(input({ specSize: "1024Mi" })), { kind: "none" });
    assert.deepEqual(planStorage(input({ templateSize: undefined, templateClass: undefined })), {
      kind: "none",
    });
  });

  it("refuses a class change and a shrink with upstream's reasons, naming the field", () => {
    const cls = planStorage(input({ specClass: "fast", templateClass: "local-path" }));
    assert.equal(cls.kind, "refuse");
    assert.equal(cls.kind === "refuse" && cls.reason, "StorageClassChangeNotSupported");
    assert.match(cls.kind === "refuse" ? cls.message : "", /spec\.storage\.storageClassName fast/);
    const shrink = planStorage(input({ specSize: "512Mi" }));
    assert.equal(shrink.kind === "refuse" && shrink.reason, "StorageShrinkNotSupported");
    assert.match(shrink.kind === "refuse" ? shrink.message : "", /spec\.storage\.size 512Mi/);
    const bad = planStorage(input({ specSize: "lots" }));
    assert.equal(bad.kind === "refuse" && bad.reason, "StorageInvalidSize");
  });

  it("asks to look at the class and claims before growing, and refuses when the class cannot expand", () => {
    assert.deepEqual(planStorage(input()), { kind: "inspect" });
    const no = planStorage(input({ expansionAllowed: false, className: "local-path", claims: [claim(0)] }));
    assert.equal(no.kind === "refuse" && no.reason, "StorageResizeNotSupported");
    assert.match(no.kind === "refuse" ? no.message : "", /StorageClass local-path/);
  });

  it("grows only the claims that ask for less", () => {
    const plan = planStorage(
      input({
        expansionAllowed: true,
        claims: [claim(0, { request: "1Gi" }), claim(1), claim(2, { request: "1Gi" })],
      }),
    );
    assert.deepEqual(plan, { kind: "grow", claims: ["data-bao-0", "data-bao-2"], size: "2Gi" });
  });

  it("reports expanded once every capacity shows the size, and restarts nothing without the condition", () => {
    const claims = [0, 1, 2].map((i) => claim(i, { capacity: "2Gi" }));
    assert.deepEqual(planStorage(input({ expansionAllowed: true, claims })), {
      kind: "settled",
      expanded: true,
      message: "3 volume(s) at 2Gi",
    });
    const partly = planStorage(input({ expansionAllowed: true, claims: [claim(0), ...claims.slice(1)] }));
    assert.equal(partly.kind === "settled" && partly.expanded, false);
  });

  it("needs the pods once a file system waits for a remount", () => {
    assert.deepEqual(planStorage(input({ expansionAllowed: true, claims: pendingClaims() })), {
      kind: "inspect",
    });
  });

  it("restarts standbys first, highest ordinal first, the active node last, one per pass", () => {
    const base = input({ expansionAllowed: true, claims: pendingClaims(), leader: "bao-2" });
    const order: string[] = [];
    let pods = [pod(0), pod(1), pod(2)];
    for (let step = 0; step < 4; step++) {
      const plan = planStorage({ ...base, pods });
      if (plan.kind !== "restart") {
        assert.equal(plan.kind, "settled");
        break;
      }
      order.push(plan.pod);
      assert.equal(plan.uid, `uid-${plan.pod.slice(-1)}`);
      // The StatefulSet brings the pod back, newer than the condition, and it becomes Ready.
      pods = pods.map((p) =>
        p.name === plan.pod
          ? pod(Number(p.name.slice(-1)), { creationTimestamp: AFTER, uid: `new-${p.name}` })
          : p,
      );
    }
    assert.deepEqual(order, ["bao-1", "bao-0", "bao-2"]);
  });

  it("keeps the active node for last while a standby's volume is still growing", () => {
    const pods = [0, 1, 2].map((i) => pod(i));
    // Only the leader's claim reports the condition yet; the others still grow (capacity 1Gi < 2Gi).
    const claims = [claim(0, { fsResizePendingSince: PENDING }), claim(1), claim(2)];
    const early = planStorage(input({ expansionAllowed: true, claims, pods, leader: "bao-0" }));
    assert.equal(early.kind, "wait");
    assert.match(early.kind === "wait" ? early.message : "", /active node bao-0 .*data-bao-1, data-bao-2/);
    // A standby whose volume already shows the size does not hold it back.
    const grownElsewhere = [claims[0]!, claim(1, { capacity: "2Gi" }), claim(2, { capacity: "2Gi" })];
    const now = planStorage(input({ expansionAllowed: true, claims: grownElsewhere, pods, leader: "bao-0" }));
    assert.deepEqual(now.kind === "restart" && now.pod, "bao-0");
    // A standby alone pending is restarted at once, whatever the others do.
    const standby = [claim(0), claim(1, { fsResizePendingSince: PENDING }), claim(2)];
    const first = planStorage(input({ expansionAllowed: true, claims: standby, pods, leader: "bao-0" }));
    assert.deepEqual(first.kind === "restart" && first.pod, "bao-1");
  });

  it("waits while any voter is not Ready, terminating or missing", () => {
    const base = input({ expansionAllowed: true, claims: pendingClaims() });
    for (const pods of [
      [pod(0), pod(1, { ready: false }), pod(2)],
      [pod(0), pod(1, { deleting: true }), pod(2)],
      [pod(0), pod(2)],
    ]) {
      const plan = planStorage({ ...base, pods });
      assert.equal(plan.kind, "wait", JSON.stringify(pods));
      assert.equal(plan.kind === "wait" && plan.reason, "StorageRestartRequired");
    }
  });

  it("does not restart a pod started after the condition appeared (a restarted operator repeats nothing)", () => {
    const pods = [0, 1, 2].map((i) => pod(i, { creationTimestamp: AFTER }));
    const plan = planStorage(input({ expansionAllowed: true, claims: pendingClaims(), pods }));
    assert.equal(plan.kind, "settled");
    // Same second as the condition: restarted, erring on the side of one restart too many.
    const same = planStorage(
      input({
        expansionAllowed: true,
        claims: pendingClaims(),
        pods: [pod(0, { creationTimestamp: PENDING })],
      }),
    );
    assert.equal(same.kind === "wait" || same.kind === "restart", true);
  });
});

describe("openbao voter volumes", () => {
  it("go with their pods on scale-down and stay when the cluster is deleted", () => {
    const cluster = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
      spec: { version: "2.7.2", storage: { size: "1Gi" } },
    } as OpenBaoCluster;
    const sts = buildStatefulSet(cluster, {
      component: "server",
      replicas: 3,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime: { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] },
    }) as { spec: { persistentVolumeClaimRetentionPolicy: unknown } };
    assert.deepEqual(sts.spec.persistentVolumeClaimRetentionPolicy, {
      whenDeleted: "Retain",
      whenScaled: "Delete",
    });
  });
});

describe("openbao StorageExpanded condition", () => {
  const cluster = {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 2 },
    spec: { version: "2.7.2", storage: { size: "2Gi" } },
  } as OpenBaoCluster;
  const result = (storage: PassResult["storage"]): PassResult => ({
    initialized: true,
    desiredReplicas: 3,
    readyReplicas: 3,
    storage,
  });
  const now = new Date("2026-12-01T10:00:00Z");
  const of = (c: OpenBaoCluster) => c.status?.conditions?.find((x) => x.type === "StorageExpanded");

  it("follows growth, stays when the step did not run, and goes when no growth is asked for", () => {
    const growing = {
      ...cluster,
      status: nextStatus(
        cluster,
        result({ expanded: false, reason: OpenBaoClusterReason.StorageRestartRequired, message: "m" }),
        now,
      ),
    };
    assert.equal(of(growing)?.status, "False");
    assert.equal(of(growing)?.reason, "StorageRestartRequired");
    assert.equal(of(growing)?.observedGeneration, 2);
    const skipped = { ...cluster, status: nextStatus(growing, result(undefined), now) };
    assert.equal(of(skipped)?.reason, "StorageRestartRequired");
    const done = {
      ...cluster,
      status: nextStatus(
        skipped,
        result({
          expanded: true,
          reason: OpenBaoClusterReason.StorageExpanded,
          message: "3 volume(s) at 2Gi",
        }),
        now,
      ),
    };
    assert.equal(of(done)?.status, "True");
    const none = { ...cluster, status: nextStatus(done, result(null), now) };
    assert.equal(of(none), undefined);
  });
});
