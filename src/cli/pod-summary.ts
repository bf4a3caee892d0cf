/**
 * `npm start`'s view of the node's pods: kubectl's watch prints a line per change of any pod (about
 * sixty for one OpenBao cluster forming), so they are folded into one line per namespace, printed
 * when that namespace's pods settle into a state not printed yet.
 */
export class PodSummary {
  private readonly pods = new Map<string, Map<string, string>>();
  private readonly printed = new Map<string, string>();
  private readonly dirty = new Set<string>();

  /**
   * One line of `kubectl get pods -A --watch --output-watch-events --no-headers`: event, namespace,
   * name, ready, status, ... Unreadable lines are ignored.
   */
  observe(line: string): void {
    const [event, namespace, name, ready, status] = line.trim().split(/\s+/);
    if (!event || !namespace || !name || !ready || !status) return;
    let pods = this.pods.get(namespace);
    if (!pods) {
      pods = new Map();
      this.pods.set(namespace, pods);
    }
    if (event === "DELETED") pods.delete(name);
    else pods.set(name, `${status} ${ready}`);
    this.dirty.add(namespace);
  }

  /** The namespaces whose pods changed since last time, one line each; none when nothing new. */
  flush(): string[] {
    const out: string[] = [];
    for (const ns of [...this.dirty].sort()) {
      const pods = this.pods.get(ns) ?? new Map<string, string>();
      const line = pods.size
        ? [...pods.entries()]
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([name, state]) => `${name} ${state}`)
            .join(", ")
        : "none";
      if (this.printed.get(ns) !== line) out.push(`pods ${ns}: ${line}`);
      this.printed.set(ns, line);
    }
    this.dirty.clear();
    return out;
  }
}
