import type { KubeClient } from "./client.js";
import { applyWouldBeNoop, dryRunChangesNothing } from "./converge.js";
import { isNotFound } from "./errors.js";
import type { KubeObject, ResourceType } from "./types.js";

export interface ApplyAnyOptions {
  /** The field manager whose intent this is; one per concern of a controller. */
  fieldManager: string;
  /** Take fields other managers own instead of failing with a conflict. */
  force?: boolean;
  /** dryRun=All: validated and admitted by the server, nothing stored. */
  dryRun?: boolean;
}

/**
 * Resolves an object's apiVersion and kind through the client's REST mapper and checks what the
 * request path needs. A namespaced kind without metadata.namespace is an error naming the field; a
 * cluster-scoped kind's namespace is dropped, as kubectl does, since it cannot mean anything.
 */
export async function resolveObject(
  client: KubeClient,
  obj: KubeObject,
): Promise<{ type: ResourceType; obj: KubeObject }> {
  const what = `${obj.kind ?? "(no kind)"} ${obj.metadata?.name ?? "(no name)"}`;
  if (!obj.apiVersion) throw new Error(`${what}: apiVersion is required`);
  if (!obj.kind) throw new Error(`${what}: kind is required`);
  if (!obj.metadata?.name) throw new Error(`${what}: metadata.name is required`);
  const type = await client.resources.mapping(obj.apiVersion, obj.kind);
  if (type.namespaced && !obj.metadata.namespace)
    throw new Error(`${what}: metadata.namespace is required, ${obj.kind} is namespaced`);
  if (!type.namespaced && obj.metadata.namespace) {
    const { namespace: _ns, ...metadata } = obj.metadata;
    return { type, obj: { ...obj, metadata } };
  }
  return { type, obj };
}

/** Server-side apply of any kind the server serves, found through discovery. */
export async function applyAny<T extends KubeObject = KubeObject>(
  client: KubeClient,
  intent: KubeObject,
  opts: ApplyAnyOptions,
): Promise<T> {
  const { type, obj } = await resolveObject(client, intent);
  return client.apply<T>(type, obj, opts);
}

/** What {@link applyIfChanged} did. */
export interface ApplyOutcome<T extends KubeObject = KubeObject> {
  /** The object as stored (or, for a dry run, as it would be). */
  object: T;
  /**
   * `unchanged`: nothing to write, decided from managedFields (no request) or a dry run (one
   * request that stores nothing); `applied`: one real apply was made; `dry-run`: the caller asked
   * for a dry run and it would change the object.
   */
  action: "unchanged" | "applied" | "dry-run";
  /** How `unchanged` was known. */
  decidedBy?: "managedFields" | "dryRun";
}

export interface ApplyIfChangedOptions extends ApplyAnyOptions {
  /**
   * The live object if the caller has it with managedFields (an informer with keepManagedFields, or
   * a list). null says the caller knows the object does not exist; undefined makes this read it.
   */
  live?: KubeObject | null;
}

/**
 * Server-side apply that writes only when the object would change, so a pass over unchanged inputs
 * makes no write. First the intent is compared with the live object's managedFields and values (no
 * request); when that cannot tell, a dry-run apply is compared with the live object (a request that
 * stores nothing); only a real difference leads to the apply.
 */
export async function applyIfChanged<T extends KubeObject = KubeObject>(
  client: KubeClient,
  intent: KubeObject,
  opts: ApplyIfChangedOptions,
): Promise<ApplyOutcome<T>> {
  const { type, obj } = await resolveObject(client, intent);
  const applyOpts = { fieldManager: opts.fieldManager, force: opts.force };
  let live = opts.live;
  if (live === undefined) {
    live = await client.get(type, obj.metadata.name!, obj.metadata.namespace).catch((e: unknown) => {
      if (isNotFound(e)) return null;
      throw e;
    });
  }
  if (live) {
    if (applyWouldBeNoop(obj, live, opts.fieldManager).noop)
      return { object: live as T, action: "unchanged", decidedBy: "managedFields" };
    const dry = await client.apply<T>(type, obj, { ...applyOpts, dryRun: true });
    if (dryRunChangesNothing(dry, live))
      return { object: live as T, action: "unchanged", decidedBy: "dryRun" };
    if (opts.dryRun) return { object: dry, action: "dry-run" };
  } else if (opts.dryRun) {
    return { object: await client.apply<T>(type, obj, { ...applyOpts, dryRun: true }), action: "dry-run" };
  }
  return { object: await client.apply<T>(type, obj, applyOpts), action: "applied" };
}
