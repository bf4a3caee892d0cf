/**
 * From what a pass found to its verdict: a plan's outcome, or a failure, turned into the Outcome
 * the status is written from. Pure.
 */

import { VaultSeedReason as R, type VaultSeedReasonType } from "../../apis/vaultseed-names.js";
import { errorMessage } from "../../runtime/errors.js";
import type { Logger } from "../../runtime/log.js";
import { BackendError } from "./backend-errors.js";
import { type Plan, recordedRotationToken } from "./planner.js";
import type { Outcome } from "./seed-pass.js";
import { READY_MESSAGE } from "./seed-pass.js";

/** Messages of unexpected errors are capped: they are ours, but need not be long to be useful. */
const MAX_ERROR_MESSAGE = 300;

export function outcomeOf(p: Plan, version: number, metadata: Record<string, string>): Outcome {
  const base = {
    managedKeys: p.managedKeys,
    kvVersion: version,
    rotationToken: recordedRotationToken(metadata),
  };
  const o = p.outcome;
  switch (o.kind) {
    case "ok":
      return {
        ...base,
        verdict: {
          ready: true,
          reason: R.Reconciled,
          // Fixed: what was written goes to events and logs, so the next quiet pass finds the
          // status unchanged and writes nothing.
          message: READY_MESSAGE,
        },
      };
    case "pending":
      return {
        ...base,
        verdict: { ready: false, reconciling: true, reason: o.reason, message: o.message },
        next: "wait",
      };
    case "conflict-owner":
      return { ...base, verdict: { ready: false, reason: o.reason, message: o.message } };
    default:
      return { ...base, verdict: { ready: false, stalled: true, reason: o.reason, message: o.message } };
  }
}

/**
 * Every failure of a pass ends in a condition: what OpenBao refused, with its message, or, for
 * an error nobody expected, ReconcileFailed, retried with the runtime's failure backoff and
 * counted as an error. Either way the object is reported and the other objects go on; only
 * Kubernetes API errors (thrown outside this) are retried silently.
 */
export function failure(e: unknown, log: Logger): Outcome {
  if (e instanceof BackendError) {
    const waiting = (reason: VaultSeedReasonType): Outcome => ({
      verdict: { ready: false, reconciling: true, reason, message: e.message },
      next: "wait",
    });
    const stalled = (reason: VaultSeedReasonType): Outcome => ({
      verdict: { ready: false, stalled: true, reason, message: e.message },
    });
    switch (e.failure) {
      case "forbidden":
        return waiting(R.Forbidden);
      case "unavailable":
      case "conflict":
        return waiting(R.BackendUnavailable);
      case "no-mount":
        return stalled(R.MountNotFound);
      default:
        return stalled(R.BackendRejected);
    }
  }
  const message = errorMessage(e).slice(0, MAX_ERROR_MESSAGE);
  log.error({ err: message }, "could not handle the object");
  return {
    verdict: {
      ready: false,
      reconciling: true,
      reason: R.ReconcileFailed,
      message: `the controller could not handle this object: ${message}`,
    },
    next: "wait",
  };
}
