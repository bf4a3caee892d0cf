import { randomBytes } from "node:crypto";
import { EVENTS_V1 } from "./builtin-types.js";
import type { KubeClient } from "./client.js";
import { errorMessage } from "./errors.js";
import type { Logger } from "./log.js";
import type { KubeObject } from "./types.js";

export interface EventInput {
  type: "Normal" | "Warning";
  reason: string;
  /** What the controller did or failed to do, e.g. "Write", "Reconcile". */
  action: string;
  /** Human text. Names keys and counts, never values. */
  note: string;
}

interface SeriesState {
  name: string;
  namespace: string;
  count: number;
  lastSeen: number;
}

/** How long an identical event counts as the same series instead of a new Event object. */
const SERIES_WINDOW_MS = 10 * 60_000;
const MAX_TRACKED = 4096;

/**
 * Records `events.k8s.io/v1` Events. An event identical to one recorded within the window
 * (same object, type, reason, action and note) bumps that Event's `series.count` instead of
 * creating another object. Writes never fail a reconcile: errors are logged and dropped.
 */
export class EventRecorder {
  private readonly series = new Map<string, SeriesState>();
  // Writes in flight; a set rather than a chain of promises, so finished writes are let go.
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly client: KubeClient,
    private readonly reportingController: string,
    private readonly reportingInstance: string,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  record(regarding: KubeObject, e: EventInput): void {
    const p = this.write(regarding, e).catch((err) =>
      this.log.warn({ err: errorMessage(err), reason: e.reason }, "could not record event"),
    );
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /** Resolves when every event recorded so far was written (or failed). */
  flush(): Promise<unknown> {
    return Promise.all([...this.inflight]);
  }

  private async write(regarding: KubeObject, e: EventInput): Promise<void> {
    const meta = regarding.metadata;
    const namespace = meta.namespace ?? "default";
    const id = `${meta.uid ?? meta.name}|${e.type}|${e.reason}|${e.action}|${e.note}`;
    const now = this.now();
    const micro = now.toISOString().replace("Z", "000Z");
    const known = this.series.get(id);
    if (known && now.getTime() - known.lastSeen < SERIES_WINDOW_MS) {
      known.count++;
      known.lastSeen = now.getTime();
      await this.client.mergePatch(EVENTS_V1, known.name, known.namespace, {
        series: { count: known.count, lastObservedTime: micro },
      });
      return;
    }
    const name = `${meta.name}.${randomBytes(8).toString("hex")}`;
    await this.client.create(EVENTS_V1, {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name, namespace },
      eventTime: micro,
      reportingController: this.reportingController,
      reportingInstance: this.reportingInstance,
      action: e.action,
      reason: e.reason,
      type: e.type,
      note: e.note.slice(0, 1024),
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
    });
    if (this.series.size >= MAX_TRACKED) this.series.delete(this.series.keys().next().value!);
    this.series.set(id, { name, namespace, count: 1, lastSeen: now.getTime() });
  }
}

export { EVENTS_V1 };
