import type { KubeObject } from "../../../runtime/types.js";

/**
 * The status this controller last wrote per object, with the resourceVersion it got. A pass can
 * start from an informer copy older than that write (the finalizer patch of the same pass, or a
 * watch that lags); planning from it would redo the hooks or rewrite the status. The freshest of
 * the two is used, and the memory is dropped once the cache has caught up.
 */
export class StatusMemory<S> {
  private readonly written = new Map<
    string,
    { uid: string; resourceVersion: string; status: S | undefined }
  >();

  remember(key: string, written: KubeObject & { status?: S }): void {
    const { uid, resourceVersion } = written.metadata;
    if (!uid || !resourceVersion) return;
    this.written.set(key, { uid, resourceVersion, status: written.status });
  }

  freshest<T extends KubeObject & { status?: S }>(key: string, cached: T): T {
    const w = this.written.get(key);
    if (!w) return cached;
    if (w.uid !== cached.metadata.uid || !isOlder(cached.metadata.resourceVersion, w.resourceVersion)) {
      this.written.delete(key);
      return cached;
    }
    return { ...cached, status: w.status };
  }

  forget(key: string): void {
    this.written.delete(key);
  }
}

/** resourceVersions are opaque; etcd's are increasing integers, and anything else is never older. */
export function isOlder(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}
