import { createHash } from "node:crypto";

/**
 * Names of a restore test's objects. Derived from the source cluster alone, so a restarted operator
 * finds the throwaway it made instead of making a second: one throwaway per source at a time.
 */

const SUFFIX = "-restore-test";
/**
 * Longest throwaway name: the voter StatefulSet takes the cluster's name and its pods carry
 * `controller-revision-hash: <name>-<10 chars>`, a label value (63 at most); 40 leaves room for the
 * operator's longer derived names too (`<name>-restore-serviceaccount`, `<name>-tls-server`).
 */
export const MAX_THROWAWAY_NAME = 40;

/** The throwaway cluster: `<source>-restore-test`, or cut and made unique with a hash when long. */
export function throwawayClusterName(source: string): string {
  const full = `${source}${SUFFIX}`;
  if (full.length <= MAX_THROWAWAY_NAME) return full;
  const hash = createHash("sha256").update(source).digest("hex").slice(0, 8);
  const room = MAX_THROWAWAY_NAME - SUFFIX.length - hash.length - 1;
  return `${source.slice(0, room).replace(/[-.]+$/, "")}-${hash}${SUFFIX}`;
}

/** The OpenBaoRestore that restores the snapshot into the throwaway: named after it. */
export const throwawayRestoreName = (throwaway: string): string => throwaway;

/** Annotations on the throwaway: which run it serves (read back after a restart). */
export const RunAnnotation = {
  /** The object key being restored. */
  key: "openbao.org/restore-test-key",
  /** The schedule window the run serves (empty in per-backup mode). */
  window: "openbao.org/restore-test-window",
  /** When the run started (RFC 3339): its timeout counts from here. */
  startedAt: "openbao.org/restore-test-started-at",
} as const;
