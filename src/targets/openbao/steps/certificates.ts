import { tlsEnabled } from "../workload/statefulsets/build.js";
import type { Pass, Step, StepOutcome } from "./context.js";
import { recordServiceChanges, waitingAt } from "./context.js";

/** CA and server certificates (or the External Secrets, or ACME's nothing) before anything uses them. */
export const certificatesStep: Step = {
  name: "certificates",
  async run(pass: Pass): Promise<StepOutcome> {
    if (!tlsEnabled(pass.cluster)) return undefined;
    const tls = await pass.deps.services.certificates(pass.ctx, pass.cluster);
    pass.result.tls = { ready: tls.ready, reason: tls.reason, message: tls.message };
    pass.certHash = tls.activeCertHash;
    if (tls.recheckAt !== undefined) pass.result.dueAt = [...(pass.result.dueAt ?? []), tls.recheckAt];
    recordServiceChanges(pass, tls.changes);
    if (!tls.ready) return waitingAt("certificates", tls.reason, tls.message);
    return undefined;
  },
};
