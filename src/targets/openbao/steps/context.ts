import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoClusterReasonType } from "../../../apis/openbaocluster-names.js";
import type { Informer } from "../../../runtime/informer.js";
import type { KubeObject } from "../../../runtime/types.js";
import type { Writes } from "../apply.js";
import type { BaoClient, BaoEndpoint } from "../baoclient/client.js";
import type { OpenBaoTargetConfig } from "../config.js";
import type { ImageVerifier } from "../imageverify/verifier.js";
import type { ServiceContext, WorkloadServices } from "../services.js";
import type { Blocked, PassResult } from "../status.js";
import type { AutopilotChecks } from "../workload/autopilot/autopilot.js";
import { driftOfChange } from "../workload/service-context.js";
import type { RootTokenRefusals } from "./root-token.js";

/** What the steps read besides the API client: the services, the informers' caches, the settings. */
export interface StepDeps {
  config: OpenBaoTargetConfig;
  services: WorkloadServices;
  statefulSets: Informer<KubeObject>;
  configMaps: Informer<KubeObject>;
  pdbs: Informer<KubeObject>;
  /** Which clusters' Autopilot settings are known to be as wanted (the reconciler keeps one). */
  autopilotChecks?: AutopilotChecks;
  /** Which clusters' root token OpenBao refused (the reconciler keeps one); see root-token.ts. */
  rootTokenRefusals?: RootTokenRefusals;
  /** Checks image signatures and caches what passed (the reconciler keeps one). */
  imageVerifier?: ImageVerifier;
  /** Test seam: how a pod's OpenBao is reached. */
  baoClient?: (ep: BaoEndpoint) => BaoClient;
}

/**
 * One pass's state, handed from step to step. `result` is what the status is derived from; the
 * other fields carry what an earlier step decided and a later one needs (the active certificate's
 * hash goes into the pod template, the live voter StatefulSet into the storage check).
 */
export interface Pass {
  cluster: OpenBaoCluster;
  ctx: ServiceContext;
  deps: StepDeps;
  writes: Writes;
  result: PassResult;
  /** sha256 of the active leaf; undefined without TLS or before the certificates step. */
  certHash?: string;
  /** The voter StatefulSet as cached when the pass began. */
  liveVoters?: KubeObject;
  /**
   * Suffix of the pods' config hash naming the revision of the seal-credentials Secret ("" when
   * the spec gives no inline credentials): a changed credential rolls the pods like a changed file.
   */
  sealCredentialsRevision?: string;
  /**
   * Images verified by the images step, as written → pinned to the verified digest; the workload's
   * StatefulSets run the pinned form. Undefined when nothing was verified.
   */
  pinnedImages?: ReadonlyMap<string, string>;
}

/** undefined: the next step may run. Otherwise where and why the pass stopped. */
export type StepOutcome = Blocked | undefined;

/** One ordered step of a pass. */
export interface Step {
  name: Blocked["step"];
  run(pass: Pass): Promise<StepOutcome>;
}

/** Adds what a service changed (or would change) to the pass's account of its writes. */
export function recordServiceChanges(pass: Pass, changes: readonly string[] | undefined): void {
  for (const line of changes ?? []) {
    const change = driftOfChange(line);
    if (change) pass.writes.record(change.action, change.what);
  }
}

export const waitingAt = (
  step: Blocked["step"],
  reason: OpenBaoClusterReasonType,
  message: string,
): Blocked => ({
  step,
  reason,
  message,
  failed: false,
});
