/**
 * Retry intent and the audit fields the AdminOps plane records about failures, as upstream names
 * them (status.adminOps.lastError {reason, message, at}; backup.consecutiveFailures). The caller
 * decides what failed; this only says when to try again and how to write it down.
 */
import type { OpenBaoClusterStatus } from "../../../apis/openbaocluster.js";

export interface RetryIntent {
  /** Run again after this long. */
  requeueAfterMs: number;
  /** Failures so far, this one included. */
  attempt: number;
}

const BASE_MS = 5_000;
const MAX_MS = 5 * 60_000;

/** Exponential from 5 s, doubling per consecutive failure, capped at 5 minutes. */
export function retryAfterFailure(consecutiveFailures: number): RetryIntent {
  const attempt = Math.max(1, Math.floor(consecutiveFailures));
  const requeueAfterMs = Math.min(MAX_MS, BASE_MS * 2 ** Math.min(attempt - 1, 16));
  return { requeueAfterMs, attempt };
}

type LastError = NonNullable<NonNullable<OpenBaoClusterStatus["adminOps"]>["lastError"]>;

/** status.adminOps.lastError for a failure; the message must already be free of secret values. */
export function lastError(reason: string, message: string, now: Date): LastError {
  return {
    reason: reason.slice(0, 253),
    message: message.slice(0, 4096),
    at: now.toISOString().replace(/\.\d+Z$/, "Z"),
  };
}
