import type { KubeObject } from "../runtime/types.js";

/**
 * The OpenBaoCluster sample is written for a real cluster: an upstream image version, nightly
 * backups to an object store, self-initialization. On the local node some of that cannot work, so
 * `npm start` applies a copy adjusted for it and prints every change (nothing is changed silently):
 *
 * - the version becomes the one whose image the node holds: the node has no registry to pull from;
 * - backups are left out: their object store is not on this machine, and nothing may leave it;
 * - file audit devices write to stdout: nothing is mounted at the sample's path;
 * - self-initialization is left out: the operator initializes the cluster and keeps the root token
 *   in the root-token Secret, with which `npm start` reads OpenBao's own list of Raft voters (a
 *   self-initialized cluster hands nobody a token, so its peers could not be shown).
 */
export function openBaoSampleForLocalNode(
  sample: KubeObject,
  nodeVersion: string,
): { doc: KubeObject; changes: string[] } {
  const doc = structuredClone(sample);
  const spec = (doc["spec"] ?? {}) as Record<string, unknown>;
  doc["spec"] = spec;
  const changes: string[] = [];
  if (spec["version"] !== nodeVersion) {
    changes.push(
      `spec.version ${String(spec["version"] ?? "(unset)")} → ${nodeVersion} (the image on the node)`,
    );
    spec["version"] = nodeVersion;
  }
  if (spec["image"] !== undefined) {
    changes.push("spec.image left out (the node has the upstream image for spec.version)");
    delete spec["image"];
  }
  if (spec["backup"] !== undefined) {
    changes.push("spec.backup left out (its object store is not on this machine)");
    delete spec["backup"];
  }
  const upgrade = spec["upgrade"] as Record<string, unknown> | undefined;
  if (upgrade?.["preUpgradeSnapshot"] !== undefined) {
    changes.push("spec.upgrade.preUpgradeSnapshot left out (no backup target)");
    delete upgrade["preUpgradeSnapshot"];
  }
  // The pods mount no volume at the sample's audit file path; OpenBao refuses to initialize when it
  // cannot open an audit device, so on the node the file devices write to the pod's log instead.
  const audit = Array.isArray(spec["audit"]) ? (spec["audit"] as Record<string, unknown>[]) : [];
  for (const [i, device] of audit.entries()) {
    const file = device["fileOptions"] as Record<string, unknown> | undefined;
    if (device["type"] !== "file" || !file || file["filePath"] === "stdout") continue;
    changes.push(
      `spec.audit[${i}].fileOptions.filePath ${String(file["filePath"])} → stdout (no volume there)`,
    );
    file["filePath"] = "stdout";
  }
  if (spec["selfInit"] !== undefined) {
    changes.push(
      "spec.selfInit left out (the operator initializes and keeps the root token, so the Raft voters can be shown)",
    );
    delete spec["selfInit"];
  }
  return { doc, changes };
}
