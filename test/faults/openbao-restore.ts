import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { poll } from "../support/openbao-operator.js";
import { type BaoRun, readCanary } from "./openbao-run.js";
import type { RecordedWrite } from "./write-proxy.js";

// The restore phase of the OpenBao lifecycle: the canary is overwritten after the backup, then one
// OpenBaoRestore of that backup must bring back the value as it was at backup time, whichever write
// the operator was killed after. (A request ending Unknown — its committed Job gone — is followed by
// a new one, as the OpenBaoRestore page tells a user, and reported: since the Job is created suspended
// before "Committed" and resumed after it, no crash may cause it any more.)

const COMPONENT_LABEL = "openbao.org/component";
const MAX_REQUESTS = 2;

export interface RestoreInput {
  /** The object key of the backup to restore (status.backup.lastBackupKey). */
  key: string;
  /** The store the backup went to: the cluster's spec.backup.target. */
  target: Record<string, unknown>;
  /** The canary's value when the backup was taken. */
  canaryAtBackup: string;
}

export interface RestoreOutcome {
  /** Terminal phase of each request made, in order. */
  phases: string[];
  /** The canary read after the restore equals its value at backup time (not the later one). */
  canaryAsAtBackup: boolean;
}

export async function restorePhase(r: BaoRun, input: RestoreInput): Promise<RestoreOutcome> {
  // A later value, so that reading the backup's value afterwards proves the snapshot was applied.
  const later = `${input.canaryAtBackup}-after-backup`;
  await r.bao(`bao kv put -mount=canary item v=${later}`);
  if ((await readCanary(r)) !== later) throw new Error("the canary's later value was not read back");

  const phases: string[] = [];
  for (let attempt = 1; attempt <= MAX_REQUESTS; attempt++) {
    const name = `${r.name}-t1-${attempt}`;
    await r.client.create<OpenBaoRestore>(OPENBAORESTORE, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name, namespace: r.ns },
      // No token of its own: the cluster's backup token serves (restoreAuth's last fallback).
      spec: { cluster: r.name, source: { key: input.key, target: input.target } } as OpenBaoRestore["spec"],
    });
    const phase = await poll(
      async () => {
        const got = await r.client.getOrUndefined<OpenBaoRestore>(OPENBAORESTORE, name, r.ns);
        const p = (got?.status?.phase ?? "") as string;
        return p === "Completed" || p === "Failed" || p === "Unknown" ? p : undefined;
      },
      r.stepMs,
      `OpenBaoRestore ${name} to end`,
      2000,
    );
    phases.push(phase);
    if (phase !== "Unknown") break;
    r.say(`OpenBaoRestore ${name} ended Unknown (its Job never seen): a new request, as a user would`);
  }
  if (phases.at(-1) !== "Completed") return { phases, canaryAsAtBackup: false };

  // The pods were restarted before Completed; they come back unsealed on the restored data.
  await r.settled(
    `back to ${r.voters} ready after the restore`,
    (s) => s.readyReplicas === r.voters && s.phase === "Running",
  );
  const read = await poll(
    async () => {
      const v = await readCanary(r);
      return v === input.canaryAtBackup || v === later ? v : undefined;
    },
    180_000,
    "the canary read after the restore",
    2000,
  ).catch(() => "");
  return { phases, canaryAsAtBackup: read === input.canaryAtBackup };
}

/**
 * One restore Job ever, counted two ways: the Jobs the API server stored with the restore
 * component label (the harness's watch), and the operator's successful Job creations the proxy
 * saw between the restore phase's marks.
 */
export function restoreViolations(
  r: BaoRun,
  outcome: RestoreOutcome | undefined,
  phaseWrites: readonly RecordedWrite[],
): string[] {
  if (!outcome) return [];
  const out: string[] = [];
  const seen = new Set(
    r.jobs.versions.filter((v) => v.labels[COMPONENT_LABEL] === "restore").map((v) => v.uid),
  );
  if (seen.size !== 1) out.push(`${seen.size} restore Jobs stored for one restore, not one`);
  const jobsPath = `/apis/batch/v1/namespaces/${r.ns}/jobs`;
  const created = phaseWrites.filter((w) => w.method === "POST" && w.path === jobsPath && w.status === 201);
  if (created.length !== 1)
    out.push(`${created.length} Job creations answered 201 during the restore, not one`);
  if (outcome.phases.at(-1) !== "Completed")
    out.push(`the restore did not complete: requests ended ${outcome.phases.join(", ")}`);
  if (outcome.phases.length !== 1)
    out.push(
      `the restore took ${outcome.phases.length} requests (ended ${outcome.phases.join(", ")}), not one`,
    );
  if (!outcome.canaryAsAtBackup)
    out.push("after the restore the canary does not read as it was at backup time");
  return out;
}
