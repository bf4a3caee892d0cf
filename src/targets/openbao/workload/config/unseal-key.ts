import { randomBytes } from "node:crypto";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../../apis/openbaocluster-names.js";
import { SECRET } from "../../../../runtime/builtin-types.js";
import { ApiError } from "../../../../runtime/errors.js";
import type { Writes } from "../../apply.js";
import { refOf } from "../../cluster-ref.js";
import { clusterLabels, clusterNames } from "../../identity.js";
import type { ServiceContext } from "../../services.js";

/** The key of the static seal's key file in its Secret, and the file's name where it is mounted. */
export const UNSEAL_KEY_FILE = "key";

/**
 * The static seal's key: 32 random bytes, created once and never rewritten (a new key would make
 * the existing data unreadable). It carries no owner reference: with deletionPolicy Retain the
 * volumes outlive the cluster object, and so must the key that opens them. Read through the
 * reader: a key this process just created is read back from the API server until the cache has it.
 */
export async function ensureUnsealKey(
  ctx: ServiceContext,
  writes: Writes,
  cluster: OpenBaoCluster,
): Promise<void> {
  const name = clusterNames(refOf(cluster)).unsealKeySecret;
  const ns = cluster.metadata.namespace!;
  const existing = await ctx.reader.get(SECRET, name, ns);
  if (existing) {
    const data = (existing as { data?: Record<string, string> }).data ?? {};
    if (!data[UNSEAL_KEY_FILE])
      throw new Error(
        `Secret ${ns}/${name} exists without the key "${UNSEAL_KEY_FILE}"; refusing to replace it`,
      );
    return;
  }
  if (writes.dryRun) {
    writes.record("create", `Secret/${name}`);
    return;
  }
  try {
    await ctx.client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns, labels: clusterLabels(refOf(cluster)) },
      type: "Opaque",
      data: { [UNSEAL_KEY_FILE]: randomBytes(32).toString("base64") },
    });
    writes.record("create", `Secret/${name}`);
    ctx.events.record(cluster, {
      type: "Normal",
      reason: OpenBaoClusterReason.UnsealKeyCreated,
      action: "Create",
      note: `created the static seal key Secret ${name}`,
    });
  } catch (e) {
    // Another pass (or a restarted operator) created it first: that key stands.
    if (!(e instanceof ApiError && e.code === 409)) throw e;
  }
}
