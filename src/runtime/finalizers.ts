import type { KubeClient } from "./client.js";
import type { KubeObject, ResourceType } from "./types.js";

export const hasFinalizer = (o: KubeObject, f: string): boolean =>
  o.metadata.finalizers?.includes(f) ?? false;

/**
 * Adds or removes one finalizer with a merge patch that carries the resourceVersion read, so a
 * concurrent change to the list makes this write fail (409) instead of dropping someone's entry.
 *
 * The 409 is thrown on purpose: the reconcile fails, the controller requeues the key with backoff,
 * and the next pass works on the fresh copy from the cache. A caller must never swallow it, or an
 * object being deleted stays Terminating until something else happens to enqueue it.
 */
export async function addFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  o: T,
  f: string,
  signal?: AbortSignal,
): Promise<T> {
  if (hasFinalizer(o, f)) return o;
  return patchFinalizers(client, type, o, [...(o.metadata.finalizers ?? []), f], signal);
}

export async function removeFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  o: T,
  f: string,
  signal?: AbortSignal,
): Promise<T> {
  if (!hasFinalizer(o, f)) return o;
  return patchFinalizers(
    client,
    type,
    o,
    (o.metadata.finalizers ?? []).filter((x) => x !== f),
    signal,
  );
}

function patchFinalizers<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  o: T,
  finalizers: string[],
  signal?: AbortSignal,
): Promise<T> {
  return client.request<T>({
    method: "PATCH",
    path: client.resourcePath(type, o.metadata.namespace, o.metadata.name!),
    body: {
      metadata: {
        finalizers: finalizers.length ? finalizers : null,
        resourceVersion: o.metadata.resourceVersion,
      },
    },
    contentType: "application/merge-patch+json",
    signal,
  });
}
