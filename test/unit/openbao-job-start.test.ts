import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../src/runtime/types.js";
import {
  adminOpsJobPodCluster,
  restoreJobPodOwner,
} from "../../src/targets/openbao/adminops/jobs/job-pods.js";
import { jobOutcome } from "../../src/targets/openbao/adminops/jobs/result.js";
import {
  DEFAULT_JOB_START_TIMEOUT_MS,
  jobStartHealth,
  notStartedMessage,
  startTimeoutFailure,
} from "../../src/targets/openbao/adminops/jobs/start-health.js";
import { hookOutcome } from "../../src/targets/openbao/adminops/upgrade/bluegreen/hook.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";

// The one reading of "this Job's pod cannot start" that backup, restore, the pre-upgrade snapshot
// and the validation hook share: the pod states the kubelet and the scheduler report, the bound
// counted from the Job's creation, and the reason carried on an ended Job.

const created = new Date("2026-12-06T06:00:00Z");
const at = (s: number) => new Date(created.getTime() + s * 1000);
const job = (
  extra: Partial<KubeObject["metadata"]> = {},
  status: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "backup-bao-1", namespace: "ns", creationTimestamp: created.toISOString(), ...extra },
  status,
});
const pod = (status: Record<string, unknown>, name = "backup-bao-1-abcde"): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "ns", creationTimestamp: at(1).toISOString() },
  status,
});
const waiting = (reason: string, message: string) =>
  pod({
    phase: "Pending",
    containerStatuses: [{ name: "executor", state: { waiting: { reason, message } } }],
  });

describe("openbao Job start health", () => {
  it("names an image that cannot be pulled, with the kubelet's message, until the bound", () => {
    for (const reason of ["ErrImagePull", "ImagePullBackOff", "InvalidImageName"]) {
      const h = jobStartHealth(job(), [waiting(reason, `Back-off pulling image "nope:1"`)], at(20), 300_000);
      assert.equal(h.started, false);
      if (h.started) continue;
      assert.equal(h.trouble?.reason, reason);
      assert.match(
        h.trouble!.message,
        /backup-bao-1-abcde: container executor is in \w+: Back-off pulling image "nope:1"/,
      );
      assert.equal(h.expired, false);
      assert.equal(h.deadline.toISOString(), at(300).toISOString());
      assert.match(
        notStartedMessage("backup-bao-1", h),
        /^Job backup-bao-1 cannot start \(\w+: .*fails at 2026-12-06T06:05:00Z/,
      );
    }
    const late = jobStartHealth(job(), [waiting("ImagePullBackOff", "x")], at(300), 300_000);
    assert.equal(late.started === false && late.expired, true);
  });

  it("names an unschedulable pod and a missing Secret", () => {
    const unsched = jobStartHealth(
      job(),
      [
        pod({
          phase: "Pending",
          conditions: [
            {
              type: "PodScheduled",
              status: "False",
              reason: "Unschedulable",
              message: "0/1 nodes are available: 1 Insufficient memory.",
            },
          ],
        }),
      ],
      at(5),
    );
    assert.equal(unsched.started === false && unsched.trouble?.reason, "Unschedulable");
    assert.match(
      unsched.started ? "" : unsched.trouble!.message,
      /cannot be scheduled: 0\/1 nodes are available/,
    );
    const cfg = jobStartHealth(
      job(),
      [waiting("CreateContainerConfigError", 'secret "backup-token" not found')],
      at(5),
    );
    assert.equal(cfg.started === false && cfg.trouble?.reason, "CreateContainerConfigError");
  });

  it("masks token-shaped text in what the pod says", () => {
    const h = jobStartHealth(
      job(),
      [waiting("CreateContainerError", "bad env hvs.AAAAAAAAAAAAAAAAAAAAAAAA")],
      at(5),
    );
    assert.equal(h.started, false);
    assert.doesNotMatch(h.started ? "" : h.trouble!.message, /hvs\.AAAA/);
  });

  it("is quiet while a pod is just slow, and names a Job with no pod after a minute", () => {
    const creating = jobStartHealth(job(), [waiting("ContainerCreating", "")], at(30));
    assert.equal(creating.started === false && creating.trouble, undefined);
    assert.equal(jobStartHealth(job(), [], at(30)).started === false, true);
    const none = jobStartHealth(job(), [], at(61));
    assert.equal(none.started === false && none.trouble?.reason, "NoPod");
    // Past the bound a slow pod fails too, said as such.
    const slow = jobStartHealth(job(), [waiting("ContainerCreating", "")], at(301), 300_000);
    assert.equal(slow.started === false && slow.expired, true);
    if (!slow.started)
      assert.match(
        startTimeoutFailure("backup-bao-1", slow, 300_000).message,
        /did not start within 300s \(its pod was created but never ran/,
      );
  });

  it("a pod that ran, or a Job that finished, is started whatever the clock says", () => {
    const ran = pod({ phase: "Running", containerStatuses: [{ name: "executor", state: { running: {} } }] });
    assert.deepEqual(jobStartHealth(job(), [ran], at(10_000)), { started: true });
    const done = job(
      {},
      { conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] },
    );
    assert.deepEqual(jobStartHealth(done, [], at(10_000)), { started: true });
    // The newest pod speaks: an old ImagePullBackOff pod does not matter once another ran.
    assert.deepEqual(jobStartHealth(job(), [waiting("ImagePullBackOff", ""), ran], at(10)), {
      started: true,
    });
  });

  it("an ended Job reads back as JobStartTimeout for the executor and the hook", () => {
    const ended = job(
      {
        annotations: {
          "openbao.org/job-start-failure": "Job backup-bao-1 did not start within 300s (ImagePullBackOff: …)",
        },
      },
      { conditions: [{ type: "Failed", status: "True", reason: "DeadlineExceeded" }] },
    );
    const o = jobOutcome(ended, []);
    assert.equal(o.state, "failed");
    assert.equal(o.state === "failed" && o.reason, "JobStartTimeout");
    assert.match(o.state === "failed" ? o.message : "", /did not start within 300s/);
    const h = hookOutcome(ended, []);
    assert.equal(h.state, "Failed");
    assert.match(h.message ?? "", /^never started: /);
    // Without the mark a deadline is still a deadline.
    const plain = job({}, { conditions: [{ type: "Failed", status: "True", reason: "DeadlineExceeded" }] });
    assert.equal(hookOutcome(plain, []).message, "did not finish within timeoutSeconds");
  });

  it("maps Job pods to the controller that waits on them", () => {
    const labels = (component: string) => ({
      "openbao.org/cluster": "bao",
      "openbao.org/component": component,
      "batch.kubernetes.io/job-name": "j1",
    });
    for (const c of ["backup", "upgrade-snapshot", "validation-hook", "upgrade"])
      assert.deepEqual(adminOpsJobPodCluster({ metadata: { namespace: "ns", labels: labels(c) } }), [
        "ns/bao",
      ]);
    assert.deepEqual(adminOpsJobPodCluster({ metadata: { namespace: "ns", labels: labels("server") } }), []);
    assert.deepEqual(adminOpsJobPodCluster({ metadata: { namespace: "ns", labels: labels("restore") } }), []);
    const jobs = new Map<string, KubeObject>([
      [
        "ns/j1",
        {
          metadata: {
            name: "j1",
            namespace: "ns",
            ownerReferences: [
              {
                apiVersion: "openbao.org/v1alpha1",
                kind: "OpenBaoRestore",
                name: "r1",
                uid: "u",
                controller: true,
              },
            ],
          },
        },
      ],
    ]);
    assert.deepEqual(
      restoreJobPodOwner(
        { metadata: { namespace: "ns", labels: labels("restore") } },
        jobs,
        "OpenBaoRestore",
      ),
      ["ns/r1"],
    );
    assert.deepEqual(
      restoreJobPodOwner({ metadata: { namespace: "ns", labels: labels("backup") } }, jobs, "OpenBaoRestore"),
      [],
    );
  });

  it("jobStartTimeout is configurable, defaults to 5m and refuses nonsense naming the field", () => {
    // Unset: every consumer takes the default.
    assert.equal(parseOpenBaoConfig({}, "targets.openbao").jobStartTimeoutMs, undefined);
    assert.equal(DEFAULT_JOB_START_TIMEOUT_MS, 300_000);
    assert.equal(parseOpenBaoConfig({ jobStartTimeout: "90s" }, "targets.openbao").jobStartTimeoutMs, 90_000);
    assert.throws(
      () => parseOpenBaoConfig({ jobStartTimeout: "soon" }, "targets.openbao"),
      /targets\.openbao\.jobStartTimeout/,
    );
    assert.throws(
      () => parseOpenBaoConfig({ jobStartTimeout: "10ms" }, "targets.openbao"),
      /targets\.openbao\.jobStartTimeout/,
    );
  });
});
