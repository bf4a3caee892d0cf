import type { KubeObject } from "./types.js";

/** kubectl's client-side apply keeps a full second copy of the object in this annotation. */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Drops, in place, what no reconciler reads before an object enters a cache: managedFields (server-side
 * apply's bookkeeping, often as large as the object itself) and kubectl's last-applied annotation
 * (the whole object again). Controllers here write with server-side apply and compare against
 * their own intent, so neither is ever consulted; every cached object would otherwise carry both.
 */
export function slimForCache<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta.managedFields) delete meta.managedFields;
  const annotations = meta.annotations;
  if (annotations && Object.hasOwn(annotations, LAST_APPLIED_ANNOTATION)) {
    delete annotations[LAST_APPLIED_ANNOTATION];
    if (Object.keys(annotations).length === 0) delete meta.annotations;
  }
  return obj;
}
