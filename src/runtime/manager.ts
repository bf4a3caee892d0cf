import { hostname } from "node:os";
import type { KubeClient } from "./client.js";
import type { Controller } from "./controller.js";
import { EventRecorder } from "./events.js";
import { livenessProblems } from "./health.js";
import { Informer, type InformerOptions } from "./informer.js";
import { LeaderElector } from "./leaderelection.js";
import type { Logger } from "./log.js";
import type { KubeObject, ResourceType } from "./types.js";

export interface ManagerOptions {
  /** The target this manager runs, e.g. "vault". Names the Lease (`<leaseName>-<target>`) and logs. */
  target: string;
  client: KubeClient;
  log: Logger;
  /** Namespaces the target's informers see; undefined means all. */
  namespaces?: string[];
  /** Leave undefined to run without leader election (tests, a single replica by choice). */
  leaderElection?: {
    namespace: string;
    leaseName: string;
    identity?: string;
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
  };
  /** Called when leadership is lost; the default ends the process so a fresh one starts as standby. */
  onLostLeadership?: () => void;
}

/**
 * One target's runtime: its own informers (one per resource type and selector), controllers,
 * events recorder and Lease. Informers start at once so a standby's cache is warm; controllers
 * start only while this process leads.
 */
export class Manager {
  readonly events: EventRecorder;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly controllers: Controller[] = [];
  private readonly elector?: LeaderElector;
  private readonly abort = new AbortController();
  private leading?: Promise<boolean>;
  private stopped = false;
  readonly identity: string;

  constructor(private readonly opts: ManagerOptions) {
    this.identity =
      opts.leaderElection?.identity ??
      `${hostname()}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const le = opts.leaderElection;
    if (le) {
      this.elector = new LeaderElector(opts.client, {
        namespace: le.namespace,
        name: `${le.leaseName}-${opts.target}`,
        identity: this.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        log: opts.log,
      });
    }
    this.events = new EventRecorder(opts.client, `platform-operator/${opts.target}`, this.identity, opts.log);
  }

  get target(): string {
    return this.opts.target;
  }

  get client(): KubeClient {
    return this.opts.client;
  }

  get log(): Logger {
    return this.opts.log;
  }

  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : !this.stopped;
  }

  /** The shared informer for a type (and selector); created on first use, restricted to the target's namespaces. */
  informer<T extends KubeObject>(
    type: ResourceType,
    opts: Partial<Omit<InformerOptions, "log" | "namespaces">> = {},
  ): Informer<T> {
    const id = `${type.group}/${type.version}/${type.plural}?${opts.labelSelector ?? ""}&${opts.fieldSelector ?? ""}`;
    let inf = this.informers.get(id);
    if (!inf) {
      inf = new Informer(this.opts.client, type, {
        ...opts,
        namespaces: this.opts.namespaces,
        log: this.opts.log,
      });
      this.informers.set(id, inf);
    }
    return inf as unknown as Informer<T>;
  }

  add(controller: Controller): void {
    this.controllers.push(controller);
  }

  /** Ready once every informer has listed: reconciles then see a complete cache. */
  get ready(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced);
  }

  /** Why this manager is not alive (stuck informers or queues, see health.ts); empty when it is. */
  livenessProblems(thresholdMs: number): string[] {
    const problems = livenessProblems(this.informers.values(), this.controllers, thresholdMs);
    return problems.map((p) => `${this.opts.target}: ${p}`);
  }

  async waitForCacheSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  /** Starts informers, waits for leadership (if configured), then starts controllers. Returns once they run. */
  async start(): Promise<void> {
    for (const i of this.informers.values()) i.start();
    if (this.elector) {
      this.leading = this.elector.acquire(this.abort.signal, () => this.lostLeadership());
      if (!(await this.leading)) return;
    }
    await this.waitForCacheSync();
    if (this.abort.signal.aborted) return;
    for (const c of this.controllers) c.start();
    this.opts.log.info(
      { target: this.opts.target, controllers: this.controllers.map((c) => c.name) },
      "controllers started",
    );
  }

  private lostLeadership(): void {
    void Promise.all(this.controllers.map((c) => c.stop()));
    (this.opts.onLostLeadership ?? (() => process.exit(1)))();
  }

  /** Graceful stop: no new keys, in-flight reconciles finish, the Lease is released, watches close. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    await Promise.all(this.controllers.map((c) => c.stop()));
    await this.events.flush();
    await this.elector?.release();
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
