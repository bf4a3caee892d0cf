import { JOB, PERSISTENT_VOLUME_CLAIM, POD, STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { poll } from "../support/openbao-operator.js";
import { type BaoRun, podNames, raftPeers, readCanary } from "./openbao-run.js";

// The blue-green phase of the OpenBao lifecycle: spec.version raised with `upgrade.strategy:
// BlueGreen` and a pre-promotion hook (one Job per attempt). Whichever write the operator was killed
// after, the upgrade must complete (no rollback) with green serving alone: OpenBao's Raft
// configuration lists exactly the new revision's pods, all voters; the old revision's StatefulSet,
// pods and claims are gone; exactly one hook Job was ever stored and none is left running or
// owned by nothing; the canary reads as before.

const COMPONENT_LABEL = "openbao.org/component";
const HOOK_COMPONENT = "validation-hook";

/** The spec.upgrade of a cluster upgraded blue-green, its hook a `bao status` against green. */
export function blueGreenUpgradeSpec(hookImage: string): Record<string, unknown> {
  return {
    strategy: "BlueGreen",
    blueGreen: {
      verification: {
        minSyncDuration: "10s",
        prePromotionHook: { image: hookImage, command: ["sh", "-c", "bao status"] },
      },
    },
  };
}

export interface BlueGreenOutcome {
  /** status.blueGreen.blueRevision once done: the revision serving. */
  revision: string;
  /** Why an attempt rolled back (status.blueGreen.rollbackReason), "" when none did. */
  rollbackReason: string;
  /** OpenBao's Raft peers once done ("id" or "id (non-voter)"). */
  peers: string[];
  /** Voter StatefulSets, pods and data claims of the cluster once done. */
  sets: string[];
  pods: string[];
  claims: string[];
  /** Hook Jobs still running, or owned by nothing, once done (name: why). */
  strayJobs: string[];
  /** The canary after the upgrade reads as before it. */
  canaryKept: boolean;
}

const names = (items: KubeObject[]) => items.map((o) => o.metadata.name!).sort();

/**
 * Raises the version and waits for the upgrade's end with the lock free, then for the old
 * revision's objects to go; what is left is returned for blueGreenViolations to judge. `onServing`
 * is told the serving StatefulSet's name as soon as it is known, so later phases exec into its pods.
 */
export async function blueGreenPhase(
  r: BaoRun,
  to: string,
  onServing: (set: string) => void,
): Promise<BlueGreenOutcome> {
  const before = await readCanary(r);
  await r.client.mergePatch(OPENBAOCLUSTER, r.name, r.ns, { spec: { version: to } });
  // Ended either way: green serving, or an attempt rolled back (a violation, reported, not waited out).
  const s = await r.settled(`upgraded blue-green to ${to}`, (st) => {
    const idle = (st.blueGreen?.phase ?? "Idle") === "Idle";
    const done =
      st.currentVersion === to &&
      st.readyReplicas === r.voters &&
      st.phase === "Running" &&
      !!st.blueGreen?.blueRevision;
    return idle && (done || !!st.blueGreen?.rollbackReason);
  });
  if (s.blueGreen?.rollbackReason)
    return {
      revision: s.blueGreen.blueRevision ?? "",
      rollbackReason: s.blueGreen.rollbackReason,
      peers: [],
      sets: [],
      pods: [],
      claims: [],
      strayJobs: [],
      canaryKept: false,
    };
  const revision = s.blueGreen?.blueRevision ?? "";
  const serving = `${r.name}-${revision}`;
  onServing(serving);
  const selector = `openbao.org/cluster=${r.name},openbao.org/component=server`;
  const look = async () => ({
    sets: names((await r.client.list(STATEFULSET, { namespace: r.ns, labelSelector: selector })).items),
    pods: names((await r.client.list(POD, { namespace: r.ns, labelSelector: selector })).items),
    claims: names(
      (await r.client.list(PERSISTENT_VOLUME_CLAIM, { namespace: r.ns })).items.filter((c) =>
        c.metadata.name!.startsWith("data-"),
      ),
    ),
  });
  const wantPods = podNames(r, r.voters, serving);
  const wantClaims = wantPods.map((p) => `data-${p}`);
  // The old revision goes after the end is recorded (the workload controller retires it).
  let left = await look();
  await poll(
    async () => {
      left = await look();
      return left.sets.join() === serving &&
        left.pods.join() === wantPods.join() &&
        left.claims.join() === wantClaims.join()
        ? true
        : undefined;
    },
    r.stepMs,
    `only revision ${serving}'s StatefulSet, pods and claims left`,
    2000,
  ).catch(() => undefined);
  let peers: string[] = [];
  await poll(
    async () => {
      peers = ((await raftPeers(r)) ?? []).map((p) => (p.voter ? p.id : `${p.id} (non-voter)`));
      return peers.join() === wantPods.join() ? true : undefined;
    },
    r.stepMs,
    `Raft peers to be ${wantPods.join(", ")}`,
    3000,
  ).catch(() => undefined);
  const strayJobs: string[] = [];
  for (const j of (await r.client.list(JOB, { namespace: r.ns })).items) {
    if (j.metadata.labels?.[COMPONENT_LABEL] !== HOOK_COMPONENT) continue;
    const st = (j["status"] ?? {}) as { active?: number; succeeded?: number; failed?: number };
    if ((st.active ?? 0) > 0 || !((st.succeeded ?? 0) > 0 || (st.failed ?? 0) > 0))
      strayJobs.push(`${j.metadata.name}: not finished`);
    if ((j.metadata.ownerReferences ?? []).length === 0)
      strayJobs.push(`${j.metadata.name}: owned by nothing`);
  }
  return {
    revision,
    rollbackReason: s.blueGreen?.rollbackReason ?? "",
    peers,
    ...left,
    strayJobs,
    canaryKept: before !== "" && (await readCanary(r)) === before,
  };
}

export function blueGreenViolations(r: BaoRun, to: string, o: BlueGreenOutcome | undefined): string[] {
  if (!o) return [];
  const out: string[] = [];
  const serving = `${r.name}-${o.revision}`;
  const wantPods = podNames(r, r.voters, serving);
  if (o.rollbackReason) out.push(`the upgrade to ${to} rolled back: ${o.rollbackReason}`);
  if (o.peers.join() !== wantPods.join())
    out.push(`after the upgrade the Raft peers were [${o.peers.join(", ")}], not [${wantPods.join(", ")}]`);
  if (o.sets.join() !== serving)
    out.push(`after the upgrade the voter StatefulSets were [${o.sets.join(", ")}], not [${serving}]`);
  if (o.pods.join() !== wantPods.join())
    out.push(`after the upgrade the voter pods were [${o.pods.join(", ")}], not [${wantPods.join(", ")}]`);
  const claims = wantPods.map((p) => `data-${p}`);
  if (o.claims.join() !== claims.join())
    out.push(`after the upgrade the data claims were [${o.claims.join(", ")}], not [${claims.join(", ")}]`);
  const hooks = new Set(
    r.jobs.versions.filter((v) => v.labels[COMPONENT_LABEL] === HOOK_COMPONENT).map((v) => v.uid),
  );
  if (hooks.size !== 1) out.push(`${hooks.size} pre-promotion hook Jobs stored for one attempt, not one`);
  for (const j of o.strayJobs) out.push(`hook Job ${j}`);
  if (!o.canaryKept) out.push("the canary did not read the same after the blue-green upgrade");
  return out;
}
