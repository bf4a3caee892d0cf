import { randomBytes } from "node:crypto";
import { EVENTS_V1 } from "./builtin-types.js";
import type { KubeClient } from "./client.js";
import type { KindReason } from "./conditions.js";
import { errorMessage, isNotFound } from "./errors.js";
import type { Logger } from "./log.js";
import { eventsDropped } from "./metrics.js";
import { apiVersionOf, type KubeObject, type ResourceType } from "./types.js";
import { isoMicros } from "./utc-time.js";

/** An event to record; its reason comes from a reason table (`R` narrows it to one kind's). */
export interface EventInput<R extends KindReason = KindReason> {
  type: "Normal" | "Warning";
  reason: R;
  /** What the controller did or failed to do, e.g. "Write", "Reconcile". */
  action: string;
  /** Human text. Names keys and counts, never values. */
  note: string;
}

/**
 * The recorder as one kind's controller sees it: only that kind's reasons are accepted. Every
 * EventRecorder is one; a target's dependencies name this type so a foreign reason does not compile.
 */
export interface KindEvents<R extends KindReason> {
  record(regarding: KubeObject, e: EventInput<R>, type?: ResourceType): void;
}

export interface EventRecorderOptions {
  /** Writes to the API server at the same time. Default 8. */
  maxInFlight?: number;
  /** Series waiting for a writer; a new series beyond this is dropped. Default 1000. */
  maxPending?: number;
  /** Spam filter, per object and reason: this many events at once... (client-go: 25) */
  spamBurst?: number;
  /** ...then one more per this interval (client-go: one per 5 minutes). */
  spamRefillMs?: number;
  now?: () => Date;
}

/** One Event object on the server and the occurrences it stands for. */
interface Series {
  id: string;
  name: string;
  namespace: string;
  regarding: Record<string, unknown>;
  e: EventInput;
  /** Occurrences recorded. */
  wanted: number;
  /** Occurrences the server holds: 0 before the create succeeded, then series.count. */
  written: number;
  lastSeen: number;
  busy: boolean;
  queued: boolean;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** How long an identical event counts as the same series instead of a new Event object. */
const SERIES_WINDOW_MS = 10 * 60_000;
const MAX_TRACKED = 4096;

/**
 * Records `events.k8s.io/v1` Events without ever failing or slowing a reconcile.
 *
 * - An event identical to one recorded within the window (same object, type, reason, action and
 *   note) becomes a higher `series.count` on the same Event instead of another object. The count
 *   on record moves only after the server accepted it, so a failed write is never counted.
 * - A spam filter (token bucket per object and reason, as client-go's) drops floods from one
 *   object that keeps failing the same way.
 * - Writes are bounded: a few in flight, a bounded queue of series behind them; bursts of the
 *   same series fold into one write. What cannot be queued is dropped and counted.
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly pending: Series[] = [];
  private inFlight = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly maxInFlight: number;
  private readonly maxPending: number;
  private readonly spamBurst: number;
  private readonly spamRefillMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly client: KubeClient,
    private readonly reportingController: string,
    private readonly reportingInstance: string,
    private readonly log: Logger,
    opts: EventRecorderOptions = {},
  ) {
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 8);
    this.maxPending = Math.max(1, opts.maxPending ?? 1000);
    this.spamBurst = opts.spamBurst ?? 25;
    this.spamRefillMs = opts.spamRefillMs ?? 5 * 60_000;
    this.now = opts.now ?? (() => new Date());
    for (const cause of ["spam", "queue_full", "no_api_version", "write_failed"])
      eventsDropped.inc({ cause }, 0);
  }

  /**
   * Records an event about `regarding`. Objects from a list carry no apiVersion or kind; pass
   * their `type` so the reference is complete. An event whose reference would lack them is dropped.
   */
  record(regarding: KubeObject, e: EventInput, type?: ResourceType): void {
    const meta = regarding.metadata;
    const apiVersion = regarding.apiVersion ?? (type && apiVersionOf(type));
    const kind = regarding.kind ?? type?.kind;
    if (!apiVersion || !kind) {
      eventsDropped.inc({ cause: "no_api_version" });
      this.log.warn(
        { reason: e.reason, object: meta.name },
        "event dropped: its object has no apiVersion/kind",
      );
      return;
    }
    const nowMs = this.now().getTime();
    const objectId = meta.uid ?? `${apiVersion}/${kind}/${meta.namespace ?? ""}/${meta.name}`;
    if (!this.admit(`${objectId}|${e.reason}`, nowMs)) {
      eventsDropped.inc({ cause: "spam" });
      return;
    }
    const id = `${objectId}|${e.type}|${e.reason}|${e.action}|${e.note}`;
    let s = this.series.get(id);
    if (!s || (nowMs - s.lastSeen >= SERIES_WINDOW_MS && !s.busy && !s.queued)) {
      if (this.pending.length >= this.maxPending) {
        eventsDropped.inc({ cause: "queue_full" });
        return;
      }
      s = {
        id,
        name: eventName(meta.name),
        namespace: meta.namespace ?? "default",
        regarding: {
          apiVersion,
          kind,
          name: meta.name,
          namespace: meta.namespace,
          uid: meta.uid,
          resourceVersion: meta.resourceVersion,
        },
        e,
        wanted: 0,
        written: 0,
        lastSeen: nowMs,
        busy: false,
        queued: false,
      };
      this.track(s);
    }
    s.wanted++;
    s.lastSeen = nowMs;
    this.schedule(s);
  }

  /** Resolves when every event recorded so far was written (or given up). */
  flush(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private get idle(): boolean {
    return this.inFlight === 0 && this.pending.length === 0;
  }

  /** Token bucket per source+object+reason; the source is this recorder. */
  private admit(key: string, nowMs: number): boolean {
    let b = this.buckets.get(key);
    if (b) {
      const refill = Math.max(0, Math.floor((nowMs - b.at) / this.spamRefillMs));
      b.tokens = Math.min(this.spamBurst, b.tokens + refill);
      b.at = b.tokens === this.spamBurst ? nowMs : b.at + refill * this.spamRefillMs;
      this.buckets.delete(key);
    } else {
      b = { tokens: this.spamBurst, at: nowMs };
      if (this.buckets.size >= MAX_TRACKED) this.buckets.delete(this.buckets.keys().next().value!);
    }
    // Re-inserting keeps the Map in least-recently-used order for the eviction above.
    this.buckets.set(key, b);
    if (b.tokens <= 0) return false;
    b.tokens--;
    return true;
  }

  private track(s: Series): void {
    this.series.delete(s.id);
    if (this.series.size >= MAX_TRACKED) {
      // Evict the oldest series that no writer holds; a held one is finished by its writer.
      for (const [k, v] of this.series) {
        if (!v.busy && !v.queued) {
          this.series.delete(k);
          break;
        }
      }
    }
    this.series.set(s.id, s);
  }

  private schedule(s: Series): void {
    if (s.busy || s.queued) return;
    s.queued = true;
    this.pending.push(s);
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.pending.length > 0) {
      const s = this.pending.shift()!;
      s.queued = false;
      s.busy = true;
      this.inFlight++;
      void this.write(s).finally(() => {
        s.busy = false;
        this.inFlight--;
        if (s.wanted > s.written) this.schedule(s);
        this.pump();
        if (this.idle) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
  }

  /** One write bringing the server up to `wanted` occurrences; never throws. */
  private async write(s: Series): Promise<void> {
    const target = s.wanted;
    const micro = isoMicros(this.now());
    try {
      if (s.written === 0) {
        await this.client.create(EVENTS_V1, {
          apiVersion: "events.k8s.io/v1",
          kind: "Event",
          metadata: { name: s.name, namespace: s.namespace },
          eventTime: micro,
          reportingController: this.reportingController,
          reportingInstance: this.reportingInstance,
          action: s.e.action,
          reason: s.e.reason,
          type: s.e.type,
          note: s.e.note.slice(0, 1024),
          regarding: s.regarding,
        });
        s.written = 1;
        return;
      }
      await this.client.mergePatch(EVENTS_V1, s.name, s.namespace, {
        series: { count: target, lastObservedTime: micro },
      });
      s.written = target;
    } catch (err) {
      if (s.written > 0 && isNotFound(err)) {
        // The Event expired (the API server keeps them about an hour): start a new one.
        s.name = eventName(s.regarding["name"] as string | undefined);
        s.wanted -= s.written;
        s.written = 0;
        return;
      }
      eventsDropped.inc({ cause: "write_failed" });
      this.log.warn({ err: errorMessage(err), reason: s.e.reason }, "could not record event");
      // Give these occurrences up rather than retry: events are best effort.
      if (s.written === 0) this.series.delete(s.id);
      s.wanted = s.written;
    }
  }
}

/** `<object>.<16 hex>`, within the 253 characters an Event name may have. */
function eventName(objectName: string | undefined): string {
  const base = (objectName ?? "object").slice(0, 236).replace(/[^a-z0-9]+$/, "");
  return `${base || "object"}.${randomBytes(8).toString("hex")}`;
}

export { EVENTS_V1 };
