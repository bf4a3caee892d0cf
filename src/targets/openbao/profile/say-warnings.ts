import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { EventRecorder } from "../../../runtime/events.js";
import { isoTime } from "../../../runtime/utc-time.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import { postureOf } from "./posture.js";
import { dueWarnings, nextWarningAt } from "./warnings.js";

/**
 * Says the posture warnings that are due and stamps when, in one merge patch of annotations (a
 * patch of metadata only: the spec is not sent, so nothing of it is validated or owned). The stamp
 * is written first: an event said without its stamp would be said again on every pass. What was
 * stamped is also remembered here, because the next pass may start from a cached object the stamp
 * has not reached yet.
 */
export class PostureWarnings {
  private readonly stamped = new Map<string, Record<string, string>>();

  constructor(
    private readonly client: KubeClient,
    private readonly events: EventRecorder,
  ) {}

  /** Returns how many warnings were said. */
  async say(cluster: OpenBaoCluster, key: string, now: Date): Promise<number> {
    const seen = this.seen(cluster, key);
    const due = dueWarnings(postureOf(cluster.spec), seen, now);
    if (due.length === 0) return 0;
    const stamps = Object.fromEntries(due.map((w) => [w.annotation, isoTime(now)]));
    await this.client.mergePatch(OPENBAOCLUSTER, cluster.metadata.name!, cluster.metadata.namespace, {
      metadata: { annotations: stamps },
    });
    this.stamped.set(key, { ...this.stamped.get(key), ...stamps });
    for (const w of due)
      this.events.record(cluster, { type: "Warning", reason: w.reason, action: "Reconcile", note: w.note });
    return due.length;
  }

  /** Epoch ms of the next reminder due for this cluster, counting the stamps written here. */
  nextDue(cluster: OpenBaoCluster, key: string): number | undefined {
    return nextWarningAt(postureOf(cluster.spec), this.seen(cluster, key));
  }

  /** The stamps on the object, or the later ones this process wrote that the cache may not show yet. */
  private seen(cluster: OpenBaoCluster, key: string): Record<string, string> {
    const seen = { ...cluster.metadata.annotations };
    for (const [k, v] of Object.entries(this.stamped.get(key) ?? {}))
      if (!(Date.parse(seen[k] ?? "") >= Date.parse(v))) seen[k] = v;
    return seen;
  }

  forget(key: string): void {
    this.stamped.delete(key);
  }
}
