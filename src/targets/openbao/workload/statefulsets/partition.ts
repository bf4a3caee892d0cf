/**
 * The voter StatefulSet's rolling-update partition, pure. The workload controller is the only writer
 * of the StatefulSet; an upgrade manager steers the roll through status.upgrade.currentPartition,
 * and this rule turns that (and the spec) into the partition to apply:
 *
 * - a rolling upgrade in flight for the version the spec asks: its currentPartition;
 * - a version change not yet taken up by an upgrade (not started, refused as a downgrade, or the
 *   spec moved away from the upgrade's target): every pod held (partition = replicas), so a new
 *   image in the template never rolls a pod by itself, even before the upgrade manager looked;
 * - otherwise 0: template changes (configuration, resources) roll as usual.
 *
 * The running version is status.currentVersion; before OpenBao was ever observed (a cluster still
 * initializing) there is nothing to protect and nothing is held.
 */
import type { OpenBaoClusterStatus } from "../../../../apis/openbaocluster.js";
import { parseVersion, sameVersion } from "../../validate/values.js";

export interface PartitionInput {
  replicas: number;
  specVersion: string;
  currentVersion?: string;
  upgrade?: Pick<NonNullable<OpenBaoClusterStatus["upgrade"]>, "targetVersion" | "currentPartition">;
}

function same(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return a.replace(/^v/, "") === b.replace(/^v/, "");
  // Build metadata does not name another version.
  return sameVersion(
    { ...pa, rest: pa.rest.replace(/\+.*$/, "") },
    { ...pb, rest: pb.rest.replace(/\+.*$/, "") },
  );
}

export function voterPartition(inp: PartitionInput): number {
  const all = Math.max(0, inp.replicas);
  const u = inp.upgrade;
  if (u) {
    if (u.currentPartition !== undefined && same(inp.specVersion, u.targetVersion))
      return Math.max(0, Math.min(all, u.currentPartition));
    return all;
  }
  if (inp.currentVersion !== undefined && !same(inp.currentVersion, inp.specVersion)) return all;
  return 0;
}
