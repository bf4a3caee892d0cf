/**
 * How loudly to log a failure a pass retries on its own: a pod restarting or an OpenBao leader
 * changing fails a few passes in a row and then heals, and a warning per pass for that is noise in
 * every user's logs. A failure is logged at debug until the same thing has failed for `graceMs`
 * without a success between, then at warn, and again every `repeatMs` while it lasts.
 */
export class LastingFailures {
  private readonly failing = new Map<string, { since: number; warnedAt?: number }>();

  constructor(
    private readonly graceMs = 60_000,
    private readonly repeatMs = 300_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Records a failure of `what` and says at which level to log it. */
  failed(what: string): "warn" | "debug" {
    const now = this.nowMs();
    const entry = this.failing.get(what) ?? { since: now };
    this.failing.set(what, entry);
    if (now - entry.since < this.graceMs) return "debug";
    if (entry.warnedAt !== undefined && now - entry.warnedAt < this.repeatMs) return "debug";
    entry.warnedAt = now;
    return "warn";
  }

  /** `what` worked: its next failure starts a new grace period. */
  succeeded(what: string): void {
    this.failing.delete(what);
  }
}
