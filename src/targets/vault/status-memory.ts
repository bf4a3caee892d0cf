import type { VaultSeed } from "../../apis/vaultseed.js";

/**
 * The status this controller last wrote per object, with the resourceVersion the API server gave
 * it. A reconcile can start from an informer copy older than that write (a finalizer added earlier
 * in the same pass queues one, and its watch event can arrive before the status write's): planning
 * or writing status from that copy would regress what the write recorded, e.g. empty
 * status.managedKeys so that a later prune leaves keys behind. The freshest of the two is used.
 */
export class StatusMemory {
  private readonly written = new Map<
    string,
    { uid: string; resourceVersion: string; status: VaultSeed["status"] }
  >();

  remember(key: string, written: VaultSeed): void {
    const { uid, resourceVersion } = written.metadata;
    if (!uid || !resourceVersion) return;
    this.written.set(key, { uid, resourceVersion, status: written.status });
  }

  /** `cached`, with the status this controller wrote instead when the cache has not caught up with it. */
  freshest(key: string, cached: VaultSeed): VaultSeed {
    const w = this.written.get(key);
    if (!w) return cached;
    if (w.uid !== cached.metadata.uid || !isOlder(cached.metadata.resourceVersion, w.resourceVersion)) {
      // The cache has caught up (or it is another object of the same name): it is the truth again.
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
