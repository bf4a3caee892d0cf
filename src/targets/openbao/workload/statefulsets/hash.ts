import { createHash } from "node:crypto";

/**
 * The pod-template hash of a rendered config.hcl. retry_join stanzas are left out: OpenBao reads
 * them only when a node joins, so a changed peer list (scaling 3 → 5 or back) must not restart the
 * pods that are already members. The ConfigMap still carries the full text for the next start.
 */
export function rolloutHash(configText: string): string {
  const withoutJoins = configText.replace(/^[ \t]*retry_join[ \t]*\{[\s\S]*?^[ \t]*\}[ \t]*\n?/gm, "");
  return createHash("sha256").update(withoutJoins, "utf8").digest("hex");
}
