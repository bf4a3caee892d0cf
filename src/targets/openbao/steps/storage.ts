import { checkStorage } from "../workload/storage/storage.js";
import type { Pass, Step, StepOutcome } from "./context.js";

/**
 * Volume growth where the class allows it, and the restarts a pending file-system resize needs; a
 * class change, a shrink and impossible growth stop the pass. Its state becomes StorageExpanded.
 */
export const storageStep: Step = {
  name: "storage",
  async run(pass: Pass): Promise<StepOutcome> {
    const out = await checkStorage(pass.ctx, pass.cluster, pass.liveVoters, pass.writes);
    pass.result.storage = out.state;
    return out.blocked ? { step: "storage", ...out.blocked } : undefined;
  },
};
