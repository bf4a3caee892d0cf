import { checkStorage } from "../workload/storage/storage.js";
import type { Pass, Step, StepOutcome } from "./context.js";

/** Volume growth where the class allows it; class changes and impossible growth stop the pass. */
export const storageStep: Step = {
  name: "storage",
  async run(pass: Pass): Promise<StepOutcome> {
    const verdict = await checkStorage(pass.ctx, pass.cluster, pass.liveVoters, pass.writes);
    return verdict ? { step: "storage", ...verdict } : undefined;
  },
};
