/**
 * What must hold before an upgrade starts, pure: the caller observes (pods, OpenBao's health, the
 * lock, whether a token exists) and this decides. The first missing piece is reported with its
 * reason and a message naming what is missing, never a value. The optional pre-upgrade snapshot is
 * checked after these (it is a Job, so it has states of its own; see snapshot-port.ts).
 */

import type { OperationLock } from "../../../../../apis/openbaocluster.js";
import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../../../apis/openbaocluster-names.js";

export interface VoterFacts {
  ordinal: number;
  /** The pod exists and its Ready condition is True. */
  ready: boolean;
  /** OpenBao's own answer; undefined when its health could not be read. */
  sealed?: boolean;
}

export interface UpgradeFacts {
  initialized: boolean;
  /** Voters the StatefulSet asks for. */
  replicas: number;
  voters: readonly VoterFacts[];
  /** A token for OpenBao's step-down and Raft reads was found (spec.upgrade.tokenSecretRef or the root token). */
  tokenAvailable: boolean;
  /** Why no token could be had, when a login was tried (spec.upgrade.jwtAuthRole) and failed. */
  tokenProblem?: string;
  lock?: OperationLock;
  holder: string;
}

export type UpgradePrerequisites =
  | { ok: true }
  | { ok: false; reason: OpenBaoClusterReasonType; message: string };

export function checkUpgradePrerequisites(f: UpgradeFacts): UpgradePrerequisites {
  if (!f.initialized)
    return missing(R.ClusterNotReady, "the cluster is not initialized yet (status.initialized)");
  const byOrdinal = new Map(f.voters.map((v) => [v.ordinal, v]));
  const notReady: number[] = [];
  const sealed: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < f.replicas; i++) {
    const v = byOrdinal.get(i);
    if (!v?.ready) notReady.push(i);
    else if (v.sealed === undefined) unknown.push(i);
    else if (v.sealed) sealed.push(i);
  }
  if (notReady.length)
    return missing(
      R.PodNotReady,
      `voter pod(s) ${notReady.join(", ")} of ${f.replicas} are not Ready; an upgrade starts only on a healthy cluster`,
    );
  if (unknown.length)
    return missing(
      R.HealthCheckFailed,
      `OpenBao's health could not be read on voter pod(s) ${unknown.join(", ")}`,
    );
  if (sealed.length) return missing(R.Sealed, `OpenBao is sealed on voter pod(s) ${sealed.join(", ")}`);
  if (!f.tokenAvailable)
    return missing(
      R.AuthenticationRequired,
      f.tokenProblem ??
        "no OpenBao token for leader step-down: set spec.upgrade.jwtAuthRole or spec.upgrade.tokenSecretRef (the root-token Secret is absent, e.g. after self-init)",
    );
  if (f.lock?.holder && f.lock.holder !== f.holder)
    return missing(
      R.OperationLockHeld,
      `the operation lock is held by ${f.lock.operation ?? "another operation"} (${f.lock.holder}); the upgrade waits for its release`,
    );
  return { ok: true };
}

function missing(reason: OpenBaoClusterReasonType, message: string): UpgradePrerequisites {
  return { ok: false, reason, message };
}
