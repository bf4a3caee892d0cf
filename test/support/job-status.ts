import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";

// No Job controller runs on the shared API server: tests that need a Job to progress write its
// status as the Job controller would.

/** When each Job started: the API server keeps status.startTime once set. */
const started = new Map<string, string>();

/** The Job controller's status writes: failed pods so far, and the end when there is one. */
export async function jobStatus(
  client: KubeClient,
  ns: string,
  name: string,
  s: { failed?: number; end?: "Complete" | "Failed" },
) {
  // Whole seconds, as the API server keeps them (a startTime sent again must be equal).
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const c = (type: string, reason: string) => ({
    type,
    status: "True",
    reason,
    message: reason,
    lastProbeTime: now,
    lastTransitionTime: now,
  });
  const conditions =
    s.end === "Complete"
      ? [c("SuccessCriteriaMet", "CompletionsReached"), c("Complete", "CompletionsReached")]
      : s.end === "Failed"
        ? [c("FailureTarget", "BackoffLimitExceeded"), c("Failed", "BackoffLimitExceeded")]
        : undefined;
  await client.applyStatus(
    JOB,
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, namespace: ns },
      status: {
        startTime: started.get(`${ns}/${name}`) ?? now,
        ...(s.failed ? { failed: s.failed } : {}),
        ...(s.end === "Complete" ? { completionTime: now, succeeded: 1 } : {}),
        ...(conditions ? { conditions } : {}),
      },
    },
    { fieldManager: "test-job-controller", force: true },
  );
  if (!started.has(`${ns}/${name}`)) started.set(`${ns}/${name}`, now);
}
