/**
 * OpenBao tokens the operator got by logging in (JWT roles), kept in memory until shortly before
 * they expire: a pass every few seconds must not log in each time. Keys are the caller's; a cluster's
 * keys start with its UID so that all of them can be forgotten at once (after OpenBao refused one,
 * as after a restore replaced its token store). Values are never logged.
 */

/** A cached token is dropped this long before it expires. */
const EXPIRY_MARGIN_MS = 60_000;
/** The longest a token is reused, whatever its lease: a token revoked by hand is replaced soon. */
const MAX_REUSE_MS = 5 * 60_000;

export class LoginTokens {
  private readonly tokens = new Map<string, { token: string; until: number }>();

  /** The token kept for `key`, if still to be reused at wall-clock `now` (milliseconds). */
  get(key: string, now: number): string | undefined {
    for (const [k, v] of this.tokens) if (v.until <= now) this.tokens.delete(k);
    return this.tokens.get(key)?.token;
  }

  /** Keeps `token`, whose lease OpenBao gave as `leaseSeconds` (0: none said), from `now`. */
  keep(key: string, token: string, leaseSeconds: number, now: number): void {
    const reuse =
      leaseSeconds > 0 ? Math.min(leaseSeconds * 1000 - EXPIRY_MARGIN_MS, MAX_REUSE_MS) : MAX_REUSE_MS;
    if (reuse > 0) this.tokens.set(key, { token, until: now + reuse });
  }

  /** Forgets every token whose key starts with `prefix`. */
  forget(prefix: string): void {
    for (const k of this.tokens.keys()) if (k.startsWith(prefix)) this.tokens.delete(k);
  }
}

/** The start of a cluster's keys: its UID, else namespace/name (objects not stored yet, in tests). */
export const clusterKey = (c: { metadata: { uid?: string; namespace?: string; name?: string } }): string =>
  `${c.metadata.uid ?? `${c.metadata.namespace}/${c.metadata.name}`}/`;
