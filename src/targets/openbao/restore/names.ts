import { createHash } from "node:crypto";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { type LockIdentity, restoreHolder } from "../opslifecycle/lock.js";

/** The restore's lock identity: the request itself, so it survives operator restarts. */
export const restoreLockIdentity = (r: Pick<OpenBaoRestore, "metadata">): LockIdentity => ({
  operation: "Restore",
  holder: restoreHolder(r.metadata.namespace ?? "", r.metadata.name ?? ""),
});

/**
 * The restore Job's name, upstream's `restore-<restore>`: derived from the request alone, so a
 * restarted operator finds the Job it made instead of making a second (one already running keeps the
 * name status.jobName recorded). Kept within 63 characters (the Job controller copies it into a
 * label); a long name is cut and made unique again with a hash of the whole name.
 */
export function restoreJobName(r: Pick<OpenBaoRestore, "metadata">): string {
  const name = r.metadata.name ?? "";
  const full = `restore-${name}`;
  if (full.length <= 63) return full;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `restore-${name.slice(0, 63 - "restore--".length - 8).replace(/[-.]+$/, "")}-${hash}`;
}
