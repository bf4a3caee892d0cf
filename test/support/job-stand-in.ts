import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";

// No kubelet or Job controller runs on the shared API server: this stands in for both, the way the
// gitlab hook tests do by hand. Every Job of one namespace that appears is completed (the status
// the Job controller writes, in the order the API server requires), and every Job ever created is
// remembered by uid, so "a hook ran twice" is counted from what the API server stored, kills of
// the operator included. A test may fail some Jobs instead, as their pods would have.

type JobObject = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

export interface SeenJob {
  name: string;
  uid: string;
  /** The label the harness gave when the Job appeared (a lifecycle phase, say). */
  during: string;
}

export interface JobStandIn {
  /** Every Job created in the namespace since start, once each, in the order they appeared. */
  readonly seen: SeenJob[];
  /** Jobs appearing from now on are recorded under `label`. */
  phase(label: string): void;
  stop(): Promise<void>;
}

const finished = (j: JobObject) =>
  (j.status?.conditions ?? []).some(
    (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
  );

/** How a Job ends: as its pod would have; undefined leaves it running. */
export type JobOutcome = "Complete" | "Failed" | undefined;

async function finish(
  client: KubeClient,
  ns: string,
  name: string,
  outcome: "Complete" | "Failed",
): Promise<void> {
  // Whole seconds, as the API server keeps them.
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const c = (type: string, reason: string, message: string) => ({
    type,
    status: "True",
    reason,
    message,
    lastProbeTime: now,
    lastTransitionTime: now,
  });
  const done = (type: string) => c(type, "CompletionsReached", "Reached expected number of succeeded pods");
  const failed = (type: string) =>
    c(type, "BackoffLimitExceeded", "Job has reached the specified backoff limit");
  await client.applyStatus(
    JOB,
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, namespace: ns },
      status:
        outcome === "Complete"
          ? {
              startTime: now,
              completionTime: now,
              succeeded: 1,
              conditions: [done("SuccessCriteriaMet"), done("Complete")],
            }
          : { startTime: now, failed: 1, conditions: [failed("FailureTarget"), failed("Failed")] },
    },
    { fieldManager: "job-stand-in", force: true },
  );
}

/**
 * Completes every Job of `ns` as it appears (or ends it as `outcome` says, asked again at each of the
 * Job's events) and records each one created; a watch, re-opened when it ends.
 */
export function startJobStandIn(
  client: KubeClient,
  ns: string,
  outcome: (job: KubeObject) => JobOutcome | Promise<JobOutcome> = () => "Complete",
): JobStandIn {
  const seen: SeenJob[] = [];
  const uids = new Set<string>();
  let during = "";
  let stopped = false;
  let current: { abort(): void } | undefined;
  const take = (j: JobObject) => {
    const uid = j.metadata.uid!;
    if (!uids.has(uid)) {
      uids.add(uid);
      seen.push({ name: j.metadata.name!, uid, during });
    }
    if (!finished(j))
      Promise.resolve(outcome(j))
        .then((end) => (end ? finish(client, ns, j.metadata.name!, end) : undefined))
        .catch(() => {
          // Deleted meanwhile, or a conflict: the next event of this Job tries again.
        });
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        const list = await client.list<JobObject>(JOB, { namespace: ns });
        for (const j of list.items) take(j);
        const w = client.watch(
          JOB,
          { namespace: ns, resourceVersion: list.metadata?.resourceVersion, timeoutSeconds: 300 },
          (e) => {
            if (e.type === "ADDED" || e.type === "MODIFIED") take(e.object as JobObject);
          },
        );
        current = w;
        await w.done;
      } catch {
        // The API server was away or the watch expired: list again after a breath.
        if (!stopped) await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();
  return {
    seen,
    phase(label) {
      during = label;
    },
    async stop() {
      stopped = true;
      current?.abort();
      await loop;
    },
  };
}
