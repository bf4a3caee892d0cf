import { randomBytes } from "node:crypto";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../../../apis/openbaocluster.js";
import { applyIfChanged } from "../../../../runtime/apply.js";
import { SECRET } from "../../../../runtime/builtin-types.js";
import { applyWouldBeNoop } from "../../../../runtime/converge.js";
import { ApiError, isNotFound } from "../../../../runtime/errors.js";
import type { Informer } from "../../../../runtime/informer.js";
import { setControllerReference } from "../../../../runtime/ownership.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { refOf } from "../../cluster-ref.js";
import type { DriftAction, DriftChange } from "../../drift.js";
import { clusterLabels, clusterNames } from "../../identity.js";
import type { ServiceContext } from "../../services.js";
import { UNSEAL_KEY_FILE } from "./build.js";

/**
 * What a pass wrote (or would write, observe-only), so a quiet pass can be proven quiet and an
 * observe-only pass can say what a real one would do. `applied` is the log's list; `changes` the
 * same entries sorted by action for the Drifted summary.
 */
export class Writes {
  readonly applied: string[] = [];
  readonly changes: DriftChange[] = [];
  constructor(readonly dryRun: boolean) {}

  record(action: DriftAction, what: string): void {
    this.changes.push({ action, what });
    this.applied.push(`${action} ${what}`);
  }
}

/**
 * Applies one owned object with server-side apply, only when it would change. `live` comes from an
 * informer that keeps managedFields, so an unchanged object costs no request at all.
 */
export async function applyOwned(
  ctx: ServiceContext,
  writes: Writes,
  intent: Record<string, unknown>,
  live: KubeObject | undefined | null,
): Promise<KubeObject> {
  const obj = setControllerReference(ctx.owner, intent as unknown as KubeObject);
  let known = live ?? undefined;
  if (writes.dryRun && !known) {
    // Observe-only reports create or update: read what the cache could not tell (a read the apply
    // would make anyway).
    const type = await ctx.client.resources.mapping(obj.apiVersion ?? "v1", obj.kind ?? "");
    known = await ctx.client.getOrUndefined(type, obj.metadata.name!, obj.metadata.namespace);
  }
  const out = await applyIfChanged(ctx.client, obj, {
    fieldManager: ctx.fieldManager,
    force: true,
    live: writes.dryRun ? (known ?? null) : known,
    dryRun: writes.dryRun,
  });
  if (out.action !== "unchanged")
    writes.record(known ? "update" : "create", `${obj.kind}/${obj.metadata.name}`);
  else if (out.decidedBy === "dryRun" && live) {
    // Each such pass costs a request: worth knowing which field keeps the cheap check from deciding.
    const why = applyWouldBeNoop(obj, live, ctx.fieldManager);
    ctx.log.debug(
      { object: `${obj.kind}/${obj.metadata.name}`, why: why.noop ? "" : why.reason },
      "unchanged, decided by a dry run",
    );
  }
  return out.object;
}

/** Looks an object up in an informer by namespace and name. */
export function cached<T extends KubeObject>(
  inf: Informer<T>,
  namespace: string,
  name: string,
): T | undefined {
  return inf.get(`${namespace}/${name}`);
}

/**
 * The static seal's key: 32 random bytes, created once and never rewritten (a new key would make
 * the existing data unreadable). It carries no owner reference: with deletionPolicy Retain the
 * volumes outlive the cluster object, and so must the key that opens them.
 */
export async function ensureUnsealKey(
  ctx: ServiceContext,
  writes: Writes,
  cluster: OpenBaoCluster,
): Promise<void> {
  const name = clusterNames(refOf(cluster)).unsealKeySecret;
  const ns = cluster.metadata.namespace!;
  const existing = await ctx.client.getOrUndefined(SECRET, name, ns);
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

/** Reads one key of a Secret, decoded; undefined when the Secret or key is missing. */
export async function secretValue(
  ctx: Pick<ServiceContext, "client">,
  namespace: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  try {
    const s = (await ctx.client.get(SECRET, name, namespace)) as { data?: Record<string, string> };
    const v = s.data?.[key];
    return v === undefined ? undefined : Buffer.from(v, "base64").toString("utf8");
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/**
 * Deletes an object this cluster made and no longer wants (a Secret of credentials the spec stopped
 * giving, a file that moved to another kind); anything not controlled by the cluster stays.
 * Observe-only records the deletion instead.
 */
export async function removeOwned(
  ctx: ServiceContext,
  writes: Writes,
  obj: { apiVersion: string; kind: string; name: string; namespace: string },
  live?: KubeObject,
): Promise<void> {
  const type = await ctx.client.resources.mapping(obj.apiVersion, obj.kind);
  const found = live ?? (await ctx.client.getOrUndefined(type, obj.name, obj.namespace));
  const uid = ctx.owner.metadata.uid;
  if (!found?.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid)) return;
  writes.record("delete", `${obj.kind}/${obj.name}`);
  if (writes.dryRun) return;
  await ctx.client
    .delete(type, obj.name, obj.namespace, { preconditions: { uid: found.metadata.uid } })
    .catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
}
