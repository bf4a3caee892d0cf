/**
 * A restore Job is created suspended (`spec.suspend`: the Job controller makes no pod) and resumed
 * only once the restore has recorded it as committed (receipt.ts). The resume names the Job's uid,
 * so a Job deleted and made again under the same name in between is never the one started.
 */
import { JOB } from "../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { KubeObject } from "../../../runtime/types.js";

type JobSpec = { suspend?: boolean };

const specOf = (job: KubeObject): JobSpec => (job["spec"] ?? {}) as JobSpec;

/** The Job as built, to be created without any pod. */
export function suspended(job: KubeObject): KubeObject {
  return { ...job, spec: { ...specOf(job), suspend: true } };
}

export function isSuspended(job: KubeObject): boolean {
  return specOf(job).suspend === true;
}

/** Lets the Job controller make its pod; the patch fails if the Job is not the one read. */
export function resumeJob(client: KubeClient, job: KubeObject): Promise<KubeObject> {
  return client.mergePatch(JOB, job.metadata.name!, job.metadata.namespace, {
    metadata: { uid: job.metadata.uid },
    spec: { suspend: false },
  });
}
