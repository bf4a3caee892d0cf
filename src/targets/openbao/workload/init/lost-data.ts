import { AcknowledgeDataLossAnnotation } from "../../../../apis/openbaocluster-names.js";

// The lost-data guard, pure. A cluster that was initialized (status.initialized, or the root-token
// Secret the operator wrote at init) whose pod 0 now answers uninitialized has lost its Raft data:
// claims deleted, a volume wiped, storage gone. Initializing then would hand out a new root token
// over the old one and make an empty OpenBao look like the user's. The guard stops until the user
// says that one loss is accepted, by the UID of the empty claim pod 0 now runs on.

export interface LostDataFacts {
  /** What says the cluster was initialized: the status, the root-token Secret, or nothing. */
  initializedBy: "status" | "root-token Secret" | undefined;
  /** Pod 0's answer to sys/health: undefined when it did not answer. */
  pod0Initialized: boolean | undefined;
  /** Another voter says it holds initialized data: pod 0 (re)joins it, nothing is lost. */
  peerInitialized: boolean;
  pod0: string;
  /** Pod 0's data claim as it is now; undefined when it cannot be read. */
  claim?: { name: string; uid: string };
  rootTokenSecret: string;
  /** The value of the acknowledgement annotation, if any. */
  acknowledgement: string | undefined;
}

export type LostDataVerdict =
  | { kind: "intact" }
  | { kind: "lost"; message: string }
  | { kind: "acknowledged"; message: string };

export function judgeLostData(f: LostDataFacts): LostDataVerdict {
  if (!f.initializedBy || f.pod0Initialized !== false || f.peerInitialized) return { kind: "intact" };
  const claim = f.claim ? `claim ${f.claim.name} (uid ${f.claim.uid})` : "its data claim";
  if (f.claim && f.acknowledgement === f.claim.uid)
    return {
      kind: "acknowledged",
      message: `the data loss on ${f.pod0} was acknowledged for ${claim}: OpenBao is initialized afresh and Secret ${f.rootTokenSecret} gets a new root token`,
    };
  const ack = f.claim
    ? `annotate the OpenBaoCluster ${AcknowledgeDataLossAnnotation}=${f.claim.uid}`
    : `annotate the OpenBaoCluster ${AcknowledgeDataLossAnnotation} with the uid of pod ${f.pod0}'s data claim`;
  const stale =
    f.claim && f.acknowledgement !== undefined
      ? ` (${AcknowledgeDataLossAnnotation} names another claim, not this one)`
      : "";
  return {
    kind: "lost",
    message: `the data is gone: the ${f.initializedBy} says OpenBao was initialized, but ${f.pod0} on ${claim} answers uninitialized, so its volume was deleted or emptied; nothing is initialized over it${stale}. If the old volume still exists, bring it back; otherwise ${ack} to initialize an empty OpenBao (a new root token replaces Secret ${f.rootTokenSecret}), then restore a snapshot with an OpenBaoRestore`,
  };
}
