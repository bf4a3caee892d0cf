/**
 * What this process has said and done per hook run, so a hook seen on many passes is logged and
 * counted once, and an object it created is not created again before the informer has seen it.
 * Only logs, metrics and that read-your-write gap depend on it: a restarted operator starts empty
 * and finds its hooks by the run id they carry.
 */
export class HookMemory {
  private readonly said = new Set<string>();
  private readonly made = new Map<string, string>();
  private readonly runs = new Map<string, string>();

  /** Drops what an earlier run of the release left. */
  startRun(release: string, runId: string): void {
    if (this.runs.get(release) === runId) return;
    this.forget(release);
    this.runs.set(release, runId);
  }

  /** True the first time `what` is told of this hook in this run. */
  first(release: string, runId: string, what: string, hook: string): boolean {
    const k = `${release}|${runId}|${what}|${hook}`;
    if (this.said.has(k)) return false;
    this.said.add(k);
    return true;
  }

  created(release: string, runId: string, hook: string, uid: string | undefined): void {
    if (uid) this.made.set(`${release}|${runId}|${hook}`, uid);
  }

  createdUid(release: string, runId: string, hook: string): string | undefined {
    return this.made.get(`${release}|${runId}|${hook}`);
  }

  forget(release: string): void {
    this.runs.delete(release);
    const prefix = `${release}|`;
    for (const k of this.said) if (k.startsWith(prefix)) this.said.delete(k);
    for (const k of this.made.keys()) if (k.startsWith(prefix)) this.made.delete(k);
  }
}
