import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { nextStatus, transitions } from "../../src/targets/openbao/status.js";
import { podTrouble, scrub } from "../../src/targets/openbao/workload/pod-trouble.js";

const pod = (status: Record<string, unknown>): KubeObject =>
  ({ apiVersion: "v1", kind: "Pod", metadata: { name: "demo-0", namespace: "ns" }, status }) as KubeObject;

// What the kubelet reports for upstream's structured_config sample on the node before the log folder
// was mounted: the server exits at once, and FallbackToLogsOnError puts its last log lines here.
const crashLooping = pod({
  phase: "Running",
  containerStatuses: [
    {
      name: "openbao",
      restartCount: 4,
      state: {
        waiting: { reason: "CrashLoopBackOff", message: "back-off 1m20s restarting failed container" },
      },
      lastState: {
        terminated: {
          exitCode: 1,
          reason: "Error",
          message:
            "==> OpenBao server configuration:\nError initializing core: open /var/log/openbao/openbao.log: no such file or directory\n",
        },
      },
    },
  ],
});

describe("openbao pod trouble: why a pod does not answer", () => {
  it("names the crash loop, the restarts, the exit code and the tail of the message", () => {
    const t = podTrouble(crashLooping);
    assert.ok(t);
    assert.equal(t.stuck, true);
    assert.match(
      t.message,
      /^pod demo-0: container openbao is in CrashLoopBackOff after 4 restarts; it last exited with code 1 \(Error\)/,
    );
    assert.match(t.message, /open \/var\/log\/openbao\/openbao\.log: no such file or directory$/);
  });

  it("says nothing for a running container that never ended, and reports a past exit without calling it stuck", () => {
    assert.equal(
      podTrouble(pod({ containerStatuses: [{ name: "openbao", state: { running: {} } }] })),
      undefined,
    );
    assert.equal(podTrouble(undefined), undefined);
    const once = podTrouble(
      pod({
        containerStatuses: [
          {
            name: "openbao",
            restartCount: 1,
            state: { running: {} },
            lastState: { terminated: { exitCode: 2 } },
          },
        ],
      }),
    );
    assert.equal(once?.stuck, false);
    assert.match(once!.message, /last exited with code 2/);
  });

  it("names an image that cannot be pulled with the kubelet's message", () => {
    const t = podTrouble(
      pod({
        containerStatuses: [
          {
            name: "openbao",
            state: {
              waiting: {
                reason: "ImagePullBackOff",
                message: 'Back-off pulling image "openbao/openbao:9.9.9"',
              },
            },
          },
        ],
      }),
    );
    assert.equal(t?.stuck, true);
    assert.match(t!.message, /ImagePullBackOff \(Back-off pulling image "openbao\/openbao:9\.9\.9"\)/);
  });

  it("masks tokens, keys and PEM blocks and keeps only the end of a long message", () => {
    const secret = "hvs.CAESIJ3x0g8H0b3ZkzQ2m1xYzA1bC2dE3fG4hI5jK6lM7n";
    const key = "q2V4mZ8bR1nT6yU3iO0pL9kJ7hG5fD4sA2zX1cV8bN6mQ3wE5rT";
    const out = scrub(
      `token ${secret}\nkey=${key}\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\nbye`,
    );
    assert.ok(!out.includes(secret.slice(4)) && !out.includes(key) && !out.includes("MIIB"), out);
    assert.equal(out, "key=[redacted] | [redacted PEM] | bye", "the last three lines");
    assert.equal(scrub(`login failed for ${secret}`), "login failed for [redacted token]");
    assert.ok(scrub("x".repeat(10) + " y".repeat(400)).length <= 241);
  });

  it("a crash loop during initialization makes Degraded true with the cause, and an event", () => {
    const cluster = {
      metadata: { name: "demo", namespace: "ns", generation: 1 },
      spec: { version: "2.4.4" },
    } as unknown as OpenBaoCluster;
    const t = podTrouble(crashLooping)!;
    const next = nextStatus(
      cluster,
      {
        initialized: false,
        desiredReplicas: 1,
        readyReplicas: 0,
        blocked: {
          step: "initialization",
          reason: OpenBaoClusterReason.PodCrashLooping,
          message: t.message,
          failed: t.stuck,
        },
      },
      new Date(0),
    );
    const degraded = next.conditions?.find((c) => c.type === "Degraded");
    assert.equal(degraded?.status, "True");
    assert.equal(degraded?.reason, "PodCrashLooping");
    assert.match(degraded!.message, /no such file or directory/);
    assert.ok(
      transitions([], next.conditions ?? []).some((c) => c.type === "Degraded" && c.status === "True"),
    );
  });
});
