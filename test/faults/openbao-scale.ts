import { PERSISTENT_VOLUME_CLAIM } from "../../src/runtime/builtin-types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { poll } from "../support/openbao-operator.js";
import { type BaoRun, podNames, raftPeers, readCanary } from "./openbao-run.js";

// The scale phase of the OpenBao lifecycle: voters → `to` → voters, out first (3 → 5 → 3) or in
// first (3 → 1 → 3: a departing pod may lead Raft, so the scale-in steps it down before removing
// it). At each size OpenBao's own Raft configuration must list exactly the cluster's pods, all
// voters (a peer left behind by a killed scale-down is a member that can never vote again and
// counts against quorum), the leaving pods' data claims must go with them, and the canary must read
// as before.

export interface ScaleOutcome {
  /** OpenBao's Raft peers once `to` pods are ready ("id" or "id (non-voter)"). */
  peersAt: string[];
  /** Its Raft peers once back at the original size. */
  peersBack: string[];
  /** Data claims left once back at the original size. */
  claimsBack: string[];
  /** The canary after the scale reads as before it. */
  canaryKept: boolean;
}

const shown = (p: { id: string; voter: boolean }[] | undefined) =>
  (p ?? []).map((s) => (s.voter ? s.id : `${s.id} (non-voter)`));

/** Raft peers once they are exactly `want` voters; the last list seen when that never comes. */
async function peersBecome(r: BaoRun, want: string[]): Promise<string[]> {
  let last: string[] = [];
  return poll(
    async () => {
      last = shown(await raftPeers(r));
      return last.join() === want.join() ? last : undefined;
    },
    r.stepMs,
    `Raft peers to be ${want.join(", ")}`,
    3000,
  ).catch(() => last);
}

export async function scalePhase(r: BaoRun, to: number): Promise<ScaleOutcome> {
  const before = await readCanary(r);
  const resize = async (n: number) => {
    await r.client.mergePatch(OPENBAOCLUSTER, r.name, r.ns, { spec: { replicas: n } });
    await r.settled(`${n} ready voters`, (s) => s.readyReplicas === n && s.phase === "Running");
    return peersBecome(r, podNames(r, n));
  };
  const peersAt = await resize(to);
  const peersBack = await resize(r.voters);
  // whenScaled: Delete: the StatefulSet controller removes the claims of the pods it removed.
  const dataClaims = async () =>
    (await r.client.list(PERSISTENT_VOLUME_CLAIM, { namespace: r.ns })).items
      .map((c) => c.metadata.name!)
      .sort();
  const want = podNames(r, r.voters).map((p) => `data-${p}`);
  const claimsBack = await poll(
    async () => {
      const c = await dataClaims();
      return c.join() === want.join() ? c : undefined;
    },
    r.stepMs,
    "the leaving pods' data claims to go",
    2000,
  ).catch(() => dataClaims());
  return { peersAt, peersBack, claimsBack, canaryKept: before !== "" && (await readCanary(r)) === before };
}

export function scaleViolations(r: BaoRun, to: number, o: ScaleOutcome | undefined): string[] {
  if (!o) return [];
  const out: string[] = [];
  const wantAt = podNames(r, to);
  const wantBack = podNames(r, r.voters);
  if (o.peersAt.join() !== wantAt.join())
    out.push(`at ${to} replicas the Raft peers were [${o.peersAt.join(", ")}], not [${wantAt.join(", ")}]`);
  if (o.peersBack.join() !== wantBack.join())
    out.push(
      `back at ${r.voters} replicas the Raft peers were [${o.peersBack.join(", ")}], not [${wantBack.join(", ")}]`,
    );
  const claims = wantBack.map((p) => `data-${p}`);
  if (o.claimsBack.join() !== claims.join())
    out.push(
      `back at ${r.voters} replicas the data claims were [${o.claimsBack.join(", ")}], not [${claims.join(", ")}]`,
    );
  if (!o.canaryKept) out.push("the canary did not read the same after the scale");
  return out;
}
