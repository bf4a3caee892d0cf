import {
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import { parseQuantity } from "../../../../runtime/quantity.js";

/**
 * What the storage step does in one pass, decided from observed state only. Pure.
 *
 * Growth has two halves. The volume itself grows when each claim's request is raised (the class
 * must allow expansion). Many drivers then grow the file system only while the volume is being
 * mounted: the claim reports FileSystemResizePending until its pod starts again. Those pods are
 * restarted one at a time, and only while every other voter is Ready, so quorum is never at risk.
 * A pod created after the condition appeared has already been through a mount since the resize and
 * is not restarted again: the decision survives an operator restart without any memory of its own.
 */

export const FS_RESIZE_PENDING = "FileSystemResizePending";

export interface ClaimView {
  name: string;
  /** spec.resources.requests.storage */
  request?: string;
  /** status.capacity.storage */
  capacity?: string;
  /** lastTransitionTime of a True FileSystemResizePending condition (RFC 3339, seconds). */
  fsResizePendingSince?: string;
}

export interface PodView {
  name: string;
  uid: string;
  creationTimestamp: string;
  ready: boolean;
  deleting: boolean;
}

export interface StoragePlanInput {
  specSize: string;
  specClass?: string;
  /** The live voter StatefulSet's claim template (immutable once created). */
  templateSize?: string;
  templateClass?: string;
  /** Whether the claims' StorageClass allows expansion; undefined when not looked up. */
  expansionAllowed?: boolean;
  className?: string;
  /** Voter claims, when they were listed. */
  claims?: ClaimView[];
  /** Voter pods, when they were listed. */
  pods?: PodView[];
  /** Voters the StatefulSet asks for. */
  replicas: number;
  /** The active node (a pod name), restarted last. */
  leader?: string;
  /** Name of the claim a voter pod mounts as its data volume. */
  claimOf: (pod: string) => string;
}

export type StoragePlan =
  | { kind: "none" }
  /** The size asks for growth: the class and the claims must be looked at. */
  | { kind: "inspect" }
  | { kind: "refuse"; reason: OpenBaoClusterReasonType; message: string }
  | { kind: "grow"; claims: string[]; size: string }
  | { kind: "restart"; pod: string; uid: string; message: string }
  | { kind: "wait"; reason: OpenBaoClusterReasonType; message: string }
  /** Growth is in hand: every claim asks for the size; `expanded` once every capacity shows it. */
  | { kind: "settled"; expanded: boolean; message: string };

export function planStorage(inp: StoragePlanInput): StoragePlan {
  if (inp.templateSize === undefined && inp.templateClass === undefined) return { kind: "none" };
  if (inp.specClass && inp.templateClass && inp.specClass !== inp.templateClass)
    return {
      kind: "refuse",
      reason: OpenBaoClusterReason.StorageClassChangeNotSupported,
      message: `spec.storage.storageClassName ${inp.specClass} differs from the volumes' class ${inp.templateClass}; a claim cannot move to another class`,
    };
  const want = parseQuantity(inp.specSize);
  if (want === undefined)
    return {
      kind: "refuse",
      reason: OpenBaoClusterReason.StorageInvalidSize,
      message: `spec.storage.size ${inp.specSize} is not a quantity`,
    };
  const have = inp.templateSize === undefined ? undefined : parseQuantity(inp.templateSize);
  if (have === undefined) return { kind: "none" };
  if (want < have)
    return {
      kind: "refuse",
      reason: OpenBaoClusterReason.StorageShrinkNotSupported,
      message: `spec.storage.size ${inp.specSize} is smaller than the volumes' ${inp.templateSize}; volumes cannot shrink`,
    };
  if (want === have) return { kind: "none" };
  if (inp.expansionAllowed === undefined || inp.claims === undefined) return { kind: "inspect" };
  if (!inp.expansionAllowed)
    return {
      kind: "refuse",
      reason: OpenBaoClusterReason.StorageResizeNotSupported,
      message: `spec.storage.size ${inp.specSize} is larger than ${inp.templateSize}, but StorageClass ${inp.className ?? "(default)"} does not allow volume expansion`,
    };
  const small = inp.claims.filter((c) => (parseQuantity(c.request ?? "0") ?? 0) < want).map((c) => c.name);
  if (small.length > 0) return { kind: "grow", claims: small, size: inp.specSize };

  const pending = inp.claims.filter((c) => c.fsResizePendingSince !== undefined);
  if (pending.length > 0) {
    if (inp.pods === undefined) return { kind: "inspect" };
    const restart = restartCandidate(inp, pending, want);
    if (restart) return restart;
  }
  const grown = inp.claims.filter((c) => (parseQuantity(c.capacity ?? "0") ?? 0) >= want).length;
  return {
    kind: "settled",
    expanded: grown === inp.claims.length,
    message:
      grown === inp.claims.length
        ? `${grown} volume(s) at ${inp.specSize}`
        : `${grown}/${inp.claims.length} volume(s) report ${inp.specSize}; the rest are still being expanded`,
  };
}

/** The next pod whose file system waits for a restart, or a wait while another voter is not Ready. */
function restartCandidate(
  inp: StoragePlanInput,
  pending: ClaimView[],
  want: number,
): StoragePlan | undefined {
  const pods = inp.pods ?? [];
  const since = new Map(pending.map((c) => [c.name, Date.parse(c.fsResizePendingSince!)]));
  // Seconds are all either timestamp carries: a pod created in the same second as the condition
  // counts as older, so at worst one pod restarts once more than needed, never once too few.
  const stale = pods.filter((p) => {
    const t = since.get(inp.claimOf(p.name));
    return t !== undefined && !p.deleting && Date.parse(p.creationTimestamp) <= t;
  });
  if (stale.length === 0) return undefined;
  const notReady = pods.filter((p) => p.deleting || !p.ready).map((p) => p.name);
  const missing = inp.replicas - pods.filter((p) => !p.deleting).length;
  if (notReady.length > 0 || missing > 0)
    return {
      kind: "wait",
      reason: OpenBaoClusterReason.StorageRestartRequired,
      message: `${stale.length} pod(s) must restart so their file systems grow; waiting for every voter to be Ready first (${
        notReady.length > 0 ? `not ready: ${notReady.sort().join(", ")}` : `${missing} missing`
      })`,
    };
  // Standbys first, highest ordinal first; the active node last, so leadership moves once at most.
  const ordinal = (n: string) => Number(n.slice(n.lastIndexOf("-") + 1));
  const order = [...stale].sort((a, b) => {
    const la = a.name === inp.leader ? 1 : 0;
    const lb = b.name === inp.leader ? 1 : 0;
    return la - lb || ordinal(b.name) - ordinal(a.name);
  });
  const next = order[0]!;
  // Claims finish growing one by one, so the active node's may report the condition before a
  // standby's. Restarting it then would move leadership, and again once that standby's turn comes
  // after it became the leader: wait while another voter's volume is still growing.
  if (next.name === inp.leader) {
    const growing = pods
      .filter((p) => p.name !== next.name)
      .map((p) => inp.claims?.find((c) => c.name === inp.claimOf(p.name)))
      .filter(
        (c): c is ClaimView =>
          c !== undefined &&
          c.fsResizePendingSince === undefined &&
          (parseQuantity(c.capacity ?? "0") ?? 0) < want,
      )
      .map((c) => c.name);
    if (growing.length > 0)
      return {
        kind: "wait",
        reason: OpenBaoClusterReason.StorageRestartRequired,
        message: `the active node ${next.name} restarts last: waiting for the volumes still growing (${growing.sort().join(", ")})`,
      };
  }
  return {
    kind: "restart",
    pod: next.name,
    uid: next.uid,
    message: `restarting ${next.name} so its volume's file system grows (${stale.length} pod(s) left)`,
  };
}
