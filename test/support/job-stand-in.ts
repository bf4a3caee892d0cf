import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";

// No kubelet or Job controller runs on the shared API server: this stands in for both, the way the
// gitlab hook tests do by hand. Every Job of one namespace that appears is completed (the status
// the Job controller writes, in the order the API server requires), and every Job ever created is
// remembered by uid, so "a hook ran twice" is counted from what the API server stored, kills of
// the operator included.

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

async function complete(client: KubeClient, ns: string, name: string): Promise<void> {
  // Whole seconds, as the API server keeps them.
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const c = (type: string) => ({
    type,
    status: "True",
    reason: "CompletionsReached",
    message: "Reached expected number of succeeded pods",
    lastProbeTime: now,
    lastTransitionTime: now,
  });
  await client.applyStatus(
    JOB,
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, namespace: ns },
      status: {
        startTime: now,
        completionTime: now,
        succeeded: 1,
        conditions: [c("SuccessCriteriaMet"), c("Complete")],
      },
    },
    { fieldManager: "job-stand-in", force: true },
  );
}

/** Completes every Job of `ns` as it appears and records each one created; a watch, re-opened when it ends. */
export function startJobStandIn(client: KubeClient, ns: string): JobStandIn {
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
      complete(client, ns, j.metadata.name!).catch(() => {
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
