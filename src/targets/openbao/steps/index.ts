import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import { Stages, type StagesOutcome } from "../../../runtime/stages.js";
import type { Blocked } from "../status.js";
import { autopilotStep } from "./autopilot.js";
import { certificatesStep } from "./certificates.js";
import type { PassBase } from "./context.js";
import { imagesStep } from "./images.js";
import { infrastructureStep } from "./infrastructure.js";
import { initializationStep } from "./initialization.js";
import { lostDataStep } from "./lost-data.js";
import { storageStep } from "./storage.js";
import { validateStep } from "./validate.js";

export type { Built, Certified, Pass, PassBase, StepDeps, StepResult, Verified } from "./context.js";

/**
 * The spec's order. Validation comes first because nothing is written for a bad spec; the rest is
 * certificates → verified images (nothing that runs an image is written before it passed) →
 * infrastructure → storage → the lost-data guard → initialization (while uninitialized) →
 * Autopilot. The guard comes before initialization, so nothing initializes over data that is gone.
 */
export const WORKLOAD_STEPS = Stages.over<PassBase, OpenBaoClusterReasonType>()
  .stage("validate", validateStep)
  .stage("certificates", certificatesStep)
  .stage("images", imagesStep)
  .stage("infrastructure", infrastructureStep)
  .stage("storage", storageStep)
  .stage("lost-data", lostDataStep)
  .stage("initialization", initializationStep)
  .stage("autopilot", autopilotStep);

type Parts<S> =
  S extends Stages<PassBase, infer C, OpenBaoClusterReasonType, undefined, infer N>
    ? { context: C; names: N }
    : never;
export type WorkloadStep = Parts<typeof WORKLOAD_STEPS>["names"];

/**
 * Per step: the step the status names when the pass stops there (the lost-data guard reports under
 * the initialization it guards), and the reason of an error thrown inside it. Keyed by the unique
 * step name, so the type checker asks for every step.
 */
export const WORKLOAD_STEP_REPORTS: Readonly<
  Record<WorkloadStep, { step: Blocked["step"]; errorReason: OpenBaoClusterReasonType }>
> = {
  validate: { step: "validate", errorReason: R.ReconcileError },
  certificates: { step: "certificates", errorReason: R.ReconcileError },
  images: { step: "images", errorReason: R.ReconcileError },
  infrastructure: { step: "infrastructure", errorReason: R.ReconcileError },
  storage: { step: "storage", errorReason: R.ReconcileError },
  "lost-data": { step: "initialization", errorReason: R.InitializationFailed },
  initialization: { step: "initialization", errorReason: R.InitializationFailed },
  autopilot: { step: "autopilot", errorReason: R.ReconcileError },
};

export const reportOf = (step: string) => WORKLOAD_STEP_REPORTS[step as WorkloadStep];

export type WorkloadOutcome = StagesOutcome<
  Parts<typeof WORKLOAD_STEPS>["context"],
  OpenBaoClusterReasonType,
  undefined
>;

/** Where the status says the pass stopped: a wait, or a failure (Degraded) for fail and invalid. */
export function blockedOf(outcome: WorkloadOutcome): Blocked | undefined {
  if (outcome.kind === "done") return undefined;
  return {
    step: reportOf(outcome.stage).step,
    reason: outcome.reason,
    message: outcome.message,
    failed: outcome.kind !== "wait",
  };
}
