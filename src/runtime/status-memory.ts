import type { KubeObject } from "./types.js";

/**
 * The status a controller last wrote per object, with the resourceVersion the API server gave it.
 * A reconcile can start from an informer copy older than that write (a finalizer patch earlier in
 * the same pass queues one, or a watch lags); planning from it would regress what the write
 * recorded (redo hooks, forget managed keys). The freshest of the two is used, and the memory is
 * dropped once the cache has caught up (or the name now belongs to another object).
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

/**
 * Whether resourceVersion `a` is older than `b`. They are opaque to clients in general; the API
 * server backed by etcd hands out increasing integers, and anything else is never called older.
 */
export function isOlder(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}
