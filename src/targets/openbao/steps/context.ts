import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoClusterReasonType } from "../../../apis/openbaocluster-names.js";
import type { Informer } from "../../../runtime/informer.js";
import { fail, type StageResult, type StageStop } from "../../../runtime/stages.js";
import type { KubeObject } from "../../../runtime/types.js";
import type { Writes } from "../apply.js";
import type { BaoClient, BaoEndpoint } from "../baoclient/client.js";
import type { OpenBaoTargetConfig } from "../config.js";
import type { ImageVerifier } from "../imageverify/verifier.js";
import type { ServiceContext, WorkloadServices } from "../services.js";
import type { PassResult } from "../status.js";
import type { AutopilotChecks } from "../workload/autopilot/autopilot.js";
import { driftOfChange } from "../workload/service-context.js";
import type { DemoteRefusals } from "./demote-refusals.js";
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
  /** Read-replica demotions OpenBao refused the operator role (the reconciler keeps one); see read-replica-suffrage.ts. */
  demoteRefusals?: DemoteRefusals;
  /** Checks image signatures and caches what passed (the reconciler keeps one). */
  imageVerifier?: ImageVerifier;
  /** Test seam: how a pod's OpenBao is reached. */
  baoClient?: (ep: BaoEndpoint) => BaoClient;
}

/**
 * What every step reads. `result` is what the status is derived from (the steps add to it what
 * they observed); what one step decides for a later one is that step's typed output instead.
 */
export interface PassBase {
  cluster: OpenBaoCluster;
  ctx: ServiceContext;
  deps: StepDeps;
  writes: Writes;
  result: PassResult;
}

/** The certificates step's output: sha256 of the active leaf (undefined without TLS); it goes into the pod template. */
export interface Certified {
  certHash: string | undefined;
}

/**
 * The images step's output: images as written → pinned to the verified digest; the workload's
 * StatefulSets run the pinned form. Undefined when nothing was verified.
 */
export interface Verified {
  pinnedImages: ReadonlyMap<string, string> | undefined;
}

/** The infrastructure step's output: the voter StatefulSet as cached when the pass began (the storage check reads it). */
export interface Built {
  liveVoters: KubeObject | undefined;
}

/**
 * What the infrastructure step's workloads read: the earlier steps' outputs, the live voters, and
 * the suffix of the pods' config hash naming the revision of the seal-credentials Secret ("" when
 * the spec gives no inline credentials): a changed credential rolls the pods like a changed file.
 */
export type WorkloadPass = PassBase & Certified & Verified & Built & { sealCredentialsRevision: string };

/** The whole context once every output is in (what the later steps and the tests see). */
export type Pass = PassBase & Certified & Verified & Built;

/** A step's result: go on with output `O`, or stop with one of the kind's reasons. */
export type StepResult<O extends object = Record<never, never>> = StageResult<
  OpenBaoClusterReasonType,
  undefined,
  O
>;

export type StepStop = StageStop<OpenBaoClusterReasonType>;

export const isStop = <T extends object>(x: T | StepStop): x is StepStop =>
  "kind" in x && (x.kind === "wait" || x.kind === "fail" || x.kind === "invalid");

/**
 * A step found something wrong that the runtime retries with its failure backoff (Degraded): the
 * message is the status's, so the error is the message itself (nothing was thrown).
 */
export const failedWith = (reason: OpenBaoClusterReasonType, message: string): StepStop =>
  fail(reason, message, { message });

/** Adds what a service changed (or would change) to the pass's account of its writes. */
export function recordServiceChanges(pass: PassBase, changes: readonly string[] | undefined): void {
  for (const line of changes ?? []) {
    const change = driftOfChange(line);
    if (change) pass.writes.record(change.action, change.what);
  }
}
