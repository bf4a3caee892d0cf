/**
 * Writing the files the pods mount from objects: config.hcl (a ConfigMap, or a Secret when it must
 * hold a credential) and the Secret of inline seal credentials. Each removes what it replaced, so
 * no credential is left behind in an object nobody mounts any more.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { applyOwned, cached, removeOwned, type Writes } from "../../apply.js";
import { refOf } from "../../cluster-ref.js";
import { Component, type ComponentName, clusterNames } from "../../identity.js";
import type { ServiceContext } from "../../services.js";
import type { Pass } from "../../steps/context.js";
import { buildConfigObject, configInSecret } from "./build.js";
import { buildSealCredentialsSecret } from "./seal-wiring.js";

/** config.hcl under `name`, in the kind configInSecret asks for; the other kind of that name goes. */
export async function applyConfigObject(
  pass: Pick<Pass, "cluster" | "ctx" | "deps" | "writes">,
  text: string,
  name: string,
  component: ComponentName = Component.Server,
): Promise<void> {
  const { cluster, ctx, deps, writes } = pass;
  const ns = cluster.metadata.namespace!;
  const obj = buildConfigObject(cluster, text, component);
  const intent = { ...obj, metadata: { ...(obj["metadata"] as Record<string, unknown>), name } };
  if (configInSecret(cluster)) {
    await applyOwned(ctx, writes, intent, undefined);
    // The file held no credential while it was a ConfigMap; the stale copy goes all the same.
    const map = cached(deps.configMaps, ns, name);
    if (map)
      await removeOwned(ctx, writes, { apiVersion: "v1", kind: "ConfigMap", name, namespace: ns }, map);
    return;
  }
  await applyOwned(ctx, writes, intent, cached(deps.configMaps, ns, name));
  // A KMS plugin seal may once have kept the file (with its credential) in a Secret: only such a
  // cluster is asked, so that the common case costs no request.
  if (cluster.spec.unseal?.type === "kms")
    await removeOwned(ctx, writes, { apiVersion: "v1", kind: "Secret", name, namespace: ns });
}

/**
 * The Secret of inline seal credentials: applied when the spec gives any, removed when it no longer
 * does. Returns what the pods' config hash gets appended ("" without inline credentials): the
 * Secret's resourceVersion, which moves only when a value does, never the value.
 */
export async function applySealCredentials(
  ctx: ServiceContext,
  writes: Writes,
  cluster: OpenBaoCluster,
): Promise<string> {
  const secret = buildSealCredentialsSecret(cluster);
  const name = clusterNames(refOf(cluster)).sealCredentialsSecret;
  const ns = cluster.metadata.namespace!;
  if (!secret) {
    // Only a seal with a block can have had inline credentials; the static seal costs no request.
    if ((cluster.spec.unseal?.type ?? "static") !== "static")
      await removeOwned(ctx, writes, { apiVersion: "v1", kind: "Secret", name, namespace: ns });
    return "";
  }
  const live = await applyOwned(ctx, writes, secret, undefined);
  return `-credentials-${live.metadata.resourceVersion ?? "new"}`;
}
