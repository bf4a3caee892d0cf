import { proceed, wait } from "../../../runtime/stages.js";
import { tlsEnabled } from "../workload/statefulsets/build.js";
import type { Certified, PassBase, StepResult } from "./context.js";
import { recordServiceChanges } from "./context.js";

/** CA and server certificates (or the External Secrets, or ACME's nothing) before anything uses them. */
export async function certificatesStep(pass: PassBase): Promise<StepResult<Certified>> {
  if (!tlsEnabled(pass.cluster)) return proceed({ certHash: undefined });
  const tls = await pass.deps.services.certificates(pass.ctx, pass.cluster);
  pass.result.tls = { ready: tls.ready, reason: tls.reason, message: tls.message };
  if (tls.recheckAt !== undefined) pass.result.dueAt = [...(pass.result.dueAt ?? []), tls.recheckAt];
  recordServiceChanges(pass, tls.changes);
  if (!tls.ready) return wait(tls.reason, tls.message);
  return proceed({ certHash: tls.activeCertHash });
}
