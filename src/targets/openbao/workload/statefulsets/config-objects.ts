/**
 * Writing the files the pods mount from objects: config.hcl (a ConfigMap, or a Secret when it must
 * hold a credential) and the Secret of inline seal credentials. Each removes what it replaced, so
 * no credential is left behind in an object nobody mounts any more.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import type { Informer } from "../../../../runtime/informer.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { applyOwned, cached, removeOwned, type Writes } from "../../apply.js";
import { refOf } from "../../cluster-ref.js";
import { Component, type ComponentName, clusterNames } from "../../identity.js";
import type { ServiceContext } from "../../services.js";
import { buildConfigObject, configInSecret } from "./build.js";
import { buildSealCredentialsSecret } from "./seal-wiring.js";

/** What of a step's pass the config objects use; the workload imports no step (steps/ import it). */
export interface ConfigObjectsPass {
  cluster: OpenBaoCluster;
  ctx: ServiceContext;
  deps: { configMaps: Informer<KubeObject> };
  writes: Writes;
}

/** config.hcl under `name`, in the kind configInSecret asks for; the other kind of that name goes. */
export async function applyConfigObject(
  pass: ConfigObjectsPass,
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
  const live = cached(deps.configMaps, ns, name);
  await applyOwned(ctx, writes, intent, live);
  // The file may have been kept in a Secret until now (a KMS plugin seal's credential, a plugin's
  // environment, since removed from the spec): that copy goes when the ConfigMap is (re)created, the
  // moment the file moves, so that a steady cluster costs no request.
  if (!live) await removeOwned(ctx, writes, { apiVersion: "v1", kind: "Secret", name, namespace: ns });
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
