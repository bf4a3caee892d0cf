import { hostname } from "node:os";
import type { KubeClient } from "./client.js";
import type { Controller } from "./controller.js";
import { EventRecorder } from "./events.js";
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
  private informersStarted = false;
  private controllersStarted = false;
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

  /**
   * The shared informer for a type (and selector, and cache mode); created on first use, restricted
   * to the target's namespaces. One asked for after the manager started is started at once.
   */
  informer<T extends KubeObject>(
    type: ResourceType,
    opts: Partial<Omit<InformerOptions, "log" | "namespaces">> = {},
  ): Informer<T> {
    const mode = `${opts.metadataOnly ? "m" : ""}${opts.keepManagedFields ? "f" : ""}`;
    const id = `${type.group}/${type.version}/${type.plural}?${opts.labelSelector ?? ""}&${opts.fieldSelector ?? ""}#${mode}`;
    let inf = this.informers.get(id);
    if (!inf) {
      inf = new Informer(this.opts.client, type, {
        ...opts,
        namespaces: this.opts.namespaces,
        log: this.opts.log,
      });
      this.informers.set(id, inf);
      if (this.informersStarted && !this.stopped) inf.start();
    }
    return inf as unknown as Informer<T>;
  }

  /**
   * The informer for a type once its cache is complete: started now if it was not yet (before the
   * manager starts too), then waited for. Controllers that discover what to watch at run time use it.
   */
  async syncedInformer<T extends KubeObject>(
    type: ResourceType,
    opts: Partial<Omit<InformerOptions, "log" | "namespaces">> = {},
  ): Promise<Informer<T>> {
    if (this.stopped) throw new Error(`manager ${this.opts.target}: stopped; no new informers`);
    const inf = this.informer<T>(type, opts);
    inf.start();
    await inf.waitForSync();
    return inf;
  }

  /** A synced informer for a kind known only by apiVersion and kind, resolved through discovery. */
  async informerFor<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    opts: Partial<Omit<InformerOptions, "log" | "namespaces">> = {},
  ): Promise<Informer<T>> {
    return this.syncedInformer<T>(await this.opts.client.resources.mapping(apiVersion, kind), opts);
  }

  /** Adds a controller; one added while the controllers already run starts at once. */
  add(controller: Controller): void {
    this.controllers.push(controller);
    if (this.controllersStarted && !this.stopped) controller.start();
  }

  /** Ready once every informer has listed: reconciles then see a complete cache. */
  get ready(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced);
  }

  async waitForCacheSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  /** Starts informers, waits for leadership (if configured), then starts controllers. Returns once they run. */
  async start(): Promise<void> {
    this.informersStarted = true;
    for (const i of this.informers.values()) i.start();
    if (this.elector) {
      this.leading = this.elector.acquire(this.abort.signal, () => this.lostLeadership());
      if (!(await this.leading)) return;
    }
    await this.waitForCacheSync();
    if (this.abort.signal.aborted) return;
    this.controllersStarted = true;
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
