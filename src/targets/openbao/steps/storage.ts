import { proceed, wait } from "../../../runtime/stages.js";
import { checkStorage } from "../workload/storage/storage.js";
import { type Built, failedWith, type PassBase, type StepResult } from "./context.js";

/**
 * Volume growth where the class allows it, and the restarts a pending file-system resize needs; a
 * class change, a shrink and impossible growth stop the pass. Its state becomes StorageExpanded.
 */
export async function storageStep(pass: PassBase & Built): Promise<StepResult> {
  const out = await checkStorage(pass.ctx, pass.cluster, pass.liveVoters, pass.writes);
  pass.result.storage = out.state;
  const b = out.blocked;
  if (!b) return proceed();
  return b.failed ? failedWith(b.reason, b.message) : wait(b.reason, b.message);
}
