/** A refused demotion is asked again after this long (or at once when pods, leader or restore change). */
export const DEMOTE_RETRY_MS = 5 * 60_000;

/**
 * Demotions OpenBao refused (HTTP 403 to the operator role: its policy lacks the grant), per
 * cluster, with the stamp they were refused under. While one stands, passes report it without
 * asking OpenBao again, so a missing grant is not retried hot; after DEMOTE_RETRY_MS, or once the
 * stamp changes, the demotion is tried again (someone may have added the grant).
 */
export class DemoteRefusals {
  private readonly refused = new Map<string, { stamp: string; at: number; message: string }>();

  /** The standing refusal's message for `key` under `stamp`, if it is recent. */
  standing(key: string, stamp: string, now: number): string | undefined {
    const r = this.refused.get(key);
    return r && r.stamp === stamp && now - r.at < DEMOTE_RETRY_MS ? r.message : undefined;
  }

  /** True when this refusal is news (none stood, or it said something else): the event is written then. */
  remember(key: string, stamp: string, now: number, message: string): boolean {
    const before = this.refused.get(key);
    this.refused.set(key, { stamp, at: now, message });
    return before?.message !== message;
  }

  forget(key: string): void {
    this.refused.delete(key);
  }
}
