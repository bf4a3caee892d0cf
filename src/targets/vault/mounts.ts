// What kind of secrets engine serves a path's mount. A KV v2 read of `<mount>/data/<path>` on a KV
// v1 mount answers 404 as if the path were absent, and the write that follows succeeds, storing a
// key literally named `data/<path>`; so the mount's type and version are known before any write.
// OpenBao's `sys/internal/ui/mounts/<mount>` answers this for any token that may use something in
// the mount (it is how OpenBao's own CLI tells KV v1 from v2), so the controller's narrow policy
// needs no grant on `sys/mounts`.

import { VaultSeedReason } from "../../apis/vaultseed-names.js";
import { untilAborted } from "../../runtime/abort.js";

export interface MountInfo {
  /** The engine, e.g. "kv", "transit", "cubbyhole". */
  type: string;
  /** options.version of a KV mount ("1" or "2"); absent for other engines. */
  version?: string;
  /** The mount's own path, with its trailing slash. */
  path: string;
}

/** undefined: OpenBao would not say (no such mount, or nothing in it granted to this token). */
export type MountLookup = (mount: string) => Promise<MountInfo | undefined>;

export type MountVerdict =
  | { ok: true }
  | {
      ok: false;
      reason: typeof VaultSeedReason.UnsupportedMount | typeof VaultSeedReason.MountNotFound;
      message: string;
    };

/** Whether a path on `mount` can be seeded, given what OpenBao says of the mount. */
export function judgeMount(mount: string, info: MountInfo | undefined): MountVerdict {
  // Unknown: the KV read that follows tells a missing mount (404 without a route) from a refusal.
  if (info === undefined) return { ok: true };
  if (info.path !== `${mount}/`) {
    return {
      ok: false,
      reason: VaultSeedReason.UnsupportedMount,
      message: `${mount}/ lies inside the mount ${info.path}; a VaultSeed path starts with its KV v2 mount, a mount nested deeper is not supported`,
    };
  }
  if (info.type !== "kv") {
    return {
      ok: false,
      reason: VaultSeedReason.UnsupportedMount,
      message: `${mount}/ is a ${info.type} mount, not KV version 2; nothing was written`,
    };
  }
  if (info.version !== "2") {
    return {
      ok: false,
      reason: VaultSeedReason.UnsupportedMount,
      message: `${mount}/ is a KV version ${info.version ?? "1"} mount; VaultSeed needs KV version 2 (upgrade the mount with options.version=2); nothing was written`,
    };
  }
  return { ok: true };
}

/**
 * Mount answers, remembered for `ttlMs` so a resync pass asks once per mount, not once per path;
 * the answer is asked again after that, so a mount fixed by hand is seen at the next resync.
 * Lookups in flight are shared. Unknown answers are not remembered.
 */
export class MountDirectory {
  private readonly known = new Map<string, { info: MountInfo; at: number }>();
  private readonly inflight = new Map<string, Promise<MountInfo | undefined>>();

  constructor(
    private readonly lookup: MountLookup,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A lookup is shared by every path on the mount, so `signal` only ends this caller's wait. */
  async check(path: string, signal?: AbortSignal): Promise<MountVerdict> {
    const mount = path.slice(0, path.indexOf("/"));
    return judgeMount(mount, await untilAborted(this.describe(mount), signal));
  }

  private async describe(mount: string): Promise<MountInfo | undefined> {
    const cached = this.known.get(mount);
    if (cached && this.now() - cached.at <= this.ttlMs) return cached.info;
    const running = this.inflight.get(mount);
    if (running) return running;
    const p = this.lookup(mount);
    this.inflight.set(mount, p);
    try {
      const info = await p;
      if (info) this.known.set(mount, { info, at: this.now() });
      else this.known.delete(mount);
      return info;
    } finally {
      this.inflight.delete(mount);
    }
  }
}
