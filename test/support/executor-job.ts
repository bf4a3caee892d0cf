import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";

// Plays the executor and the Job controller for controller tests on the shared control plane, which
// runs neither: a pod of the Job carrying the executor's termination message, and the Job's terminal
// conditions, both written through the status subresource as the kubelet and the Job controller would.

const POD: ResourceType = { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true };
const JOB: ResourceType = { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true };

export interface FinishJob {
  namespace: string;
  name: string;
  /** The executor's one JSON line; none plays a pod that died before writing it. */
  result?: Record<string, unknown>;
  ok: boolean;
  at: Date;
  image?: string;
}

export async function finishExecutorJob(client: KubeClient, f: FinishJob): Promise<void> {
  const t = f.at.toISOString().replace(/\.\d+Z$/, "Z");
  const image = f.image ?? "localhost/platform-operator:dev";
  const pod = `${f.name}-x`;
  await client.create<KubeObject>(POD, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: pod,
      namespace: f.namespace,
      labels: { "batch.kubernetes.io/job-name": f.name, "job-name": f.name },
    },
    spec: { containers: [{ name: "executor", image }] },
  });
  await client.mergePatch(
    POD,
    pod,
    f.namespace,
    {
      status: {
        phase: f.ok ? "Succeeded" : "Failed",
        containerStatuses: [
          {
            name: "executor",
            image,
            imageID: "",
            ready: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: f.ok ? 0 : 1,
                reason: f.ok ? "Completed" : "Error",
                startedAt: t,
                finishedAt: t,
                ...(f.result ? { message: JSON.stringify(f.result) } : {}),
              },
            },
          },
        ],
      },
    },
    "status",
  );
  const c = (type: string, reason: string) => ({
    type,
    status: "True",
    reason,
    message: "",
    lastProbeTime: t,
    lastTransitionTime: t,
  });
  await client.mergePatch(
    JOB,
    f.name,
    f.namespace,
    {
      status: f.ok
        ? {
            startTime: t,
            completionTime: t,
            succeeded: 1,
            conditions: [c("SuccessCriteriaMet", "CompletionsReached"), c("Complete", "CompletionsReached")],
          }
        : {
            startTime: t,
            failed: 1,
            conditions: [c("FailureTarget", "BackoffLimitExceeded"), c("Failed", "BackoffLimitExceeded")],
          },
    },
    "status",
  );
}
