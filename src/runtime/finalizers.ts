import type { KubeClient } from "./client.js";
import type { KubeObject, ResourceType } from "./types.js";

export const hasFinalizer = (o: KubeObject, f: string): boolean =>
  o.metadata.finalizers?.includes(f) ?? false;

/**
 * Adds or removes one finalizer with a merge patch that carries the resourceVersion read, so a
 * concurrent change to the list makes this write fail (409) instead of dropping someone's entry.
 */
export async function addFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  o: T,
  f: string,
): Promise<T> {
  if (hasFinalizer(o, f)) return o;
  return patchFinalizers(client, type, o, [...(o.metadata.finalizers ?? []), f]);
}

export async function removeFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  o: T,
  f: string,
): Promise<T> {
  if (!hasFinalizer(o, f)) return o;
  return patchFinalizers(
    client,
    type,
    o,
    (o.metadata.finalizers ?? []).filter((x) => x !== f),
  );
}

function patchFinalizers<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType,
  o: T,
  finalizers: string[],
): Promise<T> {
  return client.mergePatch<T>(type, o.metadata.name!, o.metadata.namespace, {
    metadata: {
      finalizers: finalizers.length ? finalizers : null,
      resourceVersion: o.metadata.resourceVersion,
    },
  });
}
