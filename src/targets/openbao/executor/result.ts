/**
 * What the executor reports back: one JSON line in its container's termination message, written by
 * the executor (formatResult) and read by the controller (parseResult), within the 4 KiB Kubernetes
 * keeps.
 */
import { type ExecutorOperation, ExecutorOperations } from "./contract.js";

type Obj = Record<string, unknown>;

/** The one JSON line the executor writes to the termination message. */
export type ExecutorResult =
  | { ok: true; operation: ExecutorOperation; key: string; size: number; durationMs: number }
  | { ok: false; operation: ExecutorOperation; key: string; error: string; reason: ExecutorFailureReason };

/** Why an executor run failed, as a short machine-readable word next to the human message. */
export const ExecutorFailureReasons = [
  "InvalidInput",
  "AuthFailed",
  "SnapshotFailed",
  "UploadFailed",
  "DownloadFailed",
  "RestoreFailed",
  /** OpenBao refused the snapshot: its hash file was sealed by another seal (key, KMS key or unseal keys). */
  "SealMismatch",
  "Interrupted",
] as const;
export type ExecutorFailureReason = (typeof ExecutorFailureReasons)[number];

/** Kubernetes keeps at most 4096 bytes of a termination message; stay under it. */
export const MAX_RESULT_BYTES = 4000;

export function formatResult(result: ExecutorResult): string {
  let line = JSON.stringify(result);
  if (result.ok) return line;
  // Cut the message (never the fields the controller needs) until the line fits; multi-byte text and
  // JSON escapes make the byte count differ from the length, hence the loop.
  let error = result.error;
  while (Buffer.byteLength(line) > MAX_RESULT_BYTES && error.length > 0) {
    error = error.slice(0, Math.max(0, error.length - (Buffer.byteLength(line) - MAX_RESULT_BYTES) - 3));
    line = JSON.stringify({ ...result, error: `${error}…` });
  }
  return line;
}

/**
 * Reads the result back from a terminated container's `message` (controller side). Undefined when
 * the message is missing or not the executor's (e.g. the pod was killed before it wrote one).
 */
export function parseResult(message: string | undefined): ExecutorResult | undefined {
  if (!message) return undefined;
  const line = message.trim().split("\n").pop() ?? "";
  try {
    const v = JSON.parse(line) as Partial<ExecutorResult> & Obj;
    if (typeof v !== "object" || v === null || typeof v.ok !== "boolean") return undefined;
    if (!ExecutorOperations.includes(v.operation as ExecutorOperation) || typeof v.key !== "string")
      return undefined;
    if (v.ok) {
      if (typeof v.size !== "number" || typeof v.durationMs !== "number") return undefined;
      return { ok: true, operation: v.operation!, key: v.key, size: v.size, durationMs: v.durationMs };
    }
    if (typeof v.error !== "string") return undefined;
    const reason = ExecutorFailureReasons.includes(v.reason as ExecutorFailureReason)
      ? (v.reason as ExecutorFailureReason)
      : "Interrupted";
    return { ok: false, operation: v.operation!, key: v.key, error: v.error, reason };
  } catch {
    return undefined;
  }
}
