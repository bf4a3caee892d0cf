import { createHash } from "node:crypto";
import type { Informer } from "../../../runtime/informer.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { objectKey } from "../../../runtime/types.js";

/**
 * Where the reconciler finds the release's objects as the cluster has them: one informer per kind,
 * selecting what carries the release labels and keeping managedFields (the fields this field manager
 * owns are what an apply is compared with). Undefined for a kind that has no cache (tests without a
 * manager): the object is then read from the API.
 */
export type LiveObjects = (type: ResourceType) => Promise<Informer<KubeObject> | undefined>;

/** The cached object: null when the cache says it does not exist, undefined when there is no cache. */
export function cachedObject(
  cache: Informer<KubeObject> | undefined,
  intent: KubeObject,
): KubeObject | null | undefined {
  if (!cache) return undefined;
  return cache.get(objectKey(intent)) ?? null;
}

/** A digest of an intent, its key order aside: the same render gives the same digest. */
export function intentDigest(intent: KubeObject): string {
  return createHash("sha256").update(canonical(intent)).digest("hex");
}

function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([p], [q]) => (p < q ? -1 : 1)))
      : x,
  );
}

/**
 * What this process last applied (or found already applied) per object: the intent's digest and the
 * resourceVersion the object had then. When the informer still holds that resourceVersion and the
 * render gives the same intent, nothing can have changed, so the object is skipped without a request.
 * An object edited by hand has another resourceVersion; one deleted is missing from the cache: both
 * go through the full comparison (managedFields, then a dry run) and are put back. Kept in memory: a
 * restarted operator compares everything once.
 */
export class AppliedMemory {
  private readonly seen = new Map<string, { digest: string; resourceVersion: string }>();

  unchanged(id: string, digest: string, live: KubeObject | null | undefined): boolean {
    const m = this.seen.get(id);
    const rv = live?.metadata.resourceVersion;
    return !!m && !!rv && m.digest === digest && m.resourceVersion === rv;
  }

  remember(id: string, digest: string, live: KubeObject): void {
    const rv = live.metadata.resourceVersion;
    if (rv) this.seen.set(id, { digest, resourceVersion: rv });
    else this.seen.delete(id);
  }

  forget(id: string): void {
    this.seen.delete(id);
  }

  /** Drops every entry whose id starts with the prefix (a release gone). */
  forgetAll(prefix: string): void {
    for (const k of this.seen.keys()) if (k.startsWith(prefix)) this.seen.delete(k);
  }
}
