import { autopilotStep } from "./autopilot.js";
import { certificatesStep } from "./certificates.js";
import type { Pass, Step, StepOutcome } from "./context.js";
import { imagesStep } from "./images.js";
import { infrastructureStep } from "./infrastructure.js";
import { initializationStep } from "./initialization.js";
import { lostDataStep } from "./lost-data.js";
import { storageStep } from "./storage.js";
import { validateStep } from "./validate.js";

export type { Pass, Step, StepDeps, StepOutcome } from "./context.js";

/**
 * The spec's order. Validation comes first because nothing is written for a bad spec; the rest is
 * certificates → verified images (nothing that runs an image is written before it passed) →
 * infrastructure → storage → the lost-data guard → initialization (while uninitialized) → Autopilot. The guard comes before initialization, so nothing initializes over
 * data that is gone.
 */
export const WORKLOAD_STEPS: readonly Step[] = [
  validateStep,
  certificatesStep,
  imagesStep,
  infrastructureStep,
  storageStep,
  lostDataStep,
  initializationStep,
  autopilotStep,
];

/**
 * Runs the steps in order until one stops the pass. `at` is told which step runs, so an error thrown
 * inside one is reported under that step's name.
 */
export async function runSteps(
  pass: Pass,
  steps: readonly Step[],
  at: (step: Step["name"]) => void,
): Promise<StepOutcome> {
  for (const step of steps) {
    at(step.name);
    const out = await step.run(pass);
    if (out) return out;
  }
  return undefined;
}
