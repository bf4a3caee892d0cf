import { createHash } from "node:crypto";

/** retry_join stanzas, with their nested attributes. */
const JOIN_STANZAS = /^[ \t]*retry_join[ \t]*\{[\s\S]*?^[ \t]*\}[ \t]*\n?/gm;
/** The attribute that makes a joining node a non-voter. */
const JOIN_AS_NON_VOTER = /^[ \t]*retry_join_as_non_voter[ \t]*=.*\n?/gm;

/**
 * The pod-template hash of a rendered config.hcl. What OpenBao reads only when a node joins Raft is
 * left out: the retry_join stanzas, so a changed peer list (scaling 3 → 5 or back) does not restart
 * the members, and retry_join_as_non_voter, so a blue-green green revision that has been promoted
 * and now serves (its config no longer joins as a non-voter) is not restarted once more. The
 * ConfigMap still carries the full text for the next start.
 */
export function rolloutHash(configText: string): string {
  const membersRead = configText.replace(JOIN_STANZAS, "").replace(JOIN_AS_NON_VOTER, "");
  return createHash("sha256").update(membersRead, "utf8").digest("hex");
}
