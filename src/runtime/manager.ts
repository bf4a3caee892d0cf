/**
 * A target's manager: its informers (started when their kind is served, one cache per kind), its
 * controllers, its Lease, the namespaces it watches and the health it reports. One class because
 * starting, stopping and the namespace changes must reach every part in one order: informers synced
 * before controllers, controllers drained before the Lease goes.
 */
import { hostname } from "node:os";
import { mayClusterWide } from "./access.js";
import { AdmissionChecks } from "./admission.js";
import { CUSTOM_RESOURCE_DEFINITION } from "./builtin-types.js";
import { CachedReader } from "./cached-reader.js";
import type { KubeClient } from "./client.js";
import type { Controller } from "./controller.js";
import { EventRecorder } from "./events.js";
import { livenessProblems } from "./health.js";
import { Informer, type InformerOptions, type WatchScope } from "./informer.js";
import { LeaderElector } from "./leaderelection.js";
import type { Logger } from "./log.js";
import type { KubeObject, ResourceType } from "./types.js";
import { InformerWhenServed, type OptionalKind } from "./when-served.js";

const DEFAULT_CLUSTER_WATCH_FROM = 10;

export interface ManagerOptions {
  /** The target this manager runs, e.g. "vault". Names the Lease (`<leaseName>-<target>`) and logs. */
  target: string;
  client: KubeClient;
  log: Logger;
  /** Namespaces the target's informers see; undefined means all. setNamespaces() changes them. */
  namespaces?: string[];
  /**
   * How a namespaced kind is watched when `namespaces` is set: one watch per namespace, one
   * cluster-wide watch filtered to them, or "auto" (default): cluster-wide once there are
   * `clusterWatchFrom` namespaces or more and the API server allows this client to list and watch
   * the kind everywhere, else per namespace. The choice is made per kind at start and logged.
   */
  watchScope?: "auto" | WatchScope;
  /** The namespace count from which "auto" prefers one cluster-wide watch (default 10). */
  clusterWatchFrom?: number;
  /** Leave undefined to run without leader election (tests, a single replica by choice). */
  leaderElection?: {
    namespace: string;
    leaseName: string;
    identity?: string;
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
  };
  /**
   * Called (synchronously, after every controller was halted) when leadership is lost; the default
   * ends the process with status 1 so a fresh one starts as standby, as controller-runtime does.
   */
  onLostLeadership?: () => void;
  /**
   * The longest stop() takes (default 20 s, inside a pod's 30 s grace period). Reconciles that
   * ignore their signal are left behind so the Lease is still released in time.
   */
  shutdownTimeoutMs?: number;
}

const DEFAULT_SHUTDOWN_TIMEOUT_MS = 20_000;

/** How a target asks the manager for an informer. */
export interface ManagedInformerOptions extends Partial<Omit<InformerOptions, "log" | "namespaces">> {
  /**
   * Watch these namespaces, whatever the target's are (e.g. `default`, for the API server's own
   * Service); setNamespaces() leaves such an informer alone.
   */
  fixedNamespaces?: string[];
  /**
   * Watch every namespace, whatever the target's are (a kind the target must see everywhere to say
   * why it does not act on it); setNamespaces() leaves such an informer alone.
   */
  allNamespaces?: boolean;
}

/** Resolves true when `p` settles within `ms`, false otherwise; never rejects. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One target's runtime: its own informers (one per resource type and selector), controllers,
 * events recorder and Lease. Informers start at once so a standby's cache is warm; controllers
 * start only while this process leads.
 */
export class Manager {
  readonly events: EventRecorder;
  /** The admission checks of the target's kinds, which the process's webhook calls while it runs. */
  readonly admission = new AdmissionChecks();
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly controllers: Controller[] = [];
  private readonly elector?: LeaderElector;
  private readonly abort = new AbortController();
  private leading?: Promise<boolean>;
  private stopped = false;
  private informersStarted = false;
  private controllersStarted = false;
  readonly identity: string;
  private namespaceList?: string[];
  private readonly clusterWideAccess = new Map<string, Promise<boolean>>();
  private readonly fixedScope = new Set<Informer<KubeObject>>();
  private stopKeepingMisses?: () => void;
  private readonly discoveryTimers = new Set<NodeJS.Timeout>();
  private readonly whenServed: InformerWhenServed[] = [];
  /** Informers retired while running (their kind went); stop() waits for them too. */
  private readonly retiring = new Set<Promise<void>>();
  /** Checks of optional kinds under way, and who waits for discovery to settle. */
  private discoveryChecks = 0;
  private crdInformer?: Informer<KubeObject>;
  private readonly settleWaiters: (() => void)[] = [];
  /** Reads served from this manager's informers (a live read only for kinds none covers). */
  readonly reader: CachedReader;

  constructor(private readonly opts: ManagerOptions) {
    this.namespaceList = opts.namespaces && [...new Set(opts.namespaces)].sort();
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
    this.reader = new CachedReader(opts.client, () => this.informers.values(), opts.log);
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
  informer<T extends KubeObject>(type: ResourceType, opts: ManagedInformerOptions = {}): Informer<T> {
    const mode = `${opts.metadataOnly ? "m" : ""}${opts.keepManagedFields ? "f" : ""}${opts.prune ? `-${opts.prune.name}` : ""}`;
    const { fixedNamespaces, allNamespaces, ...rest } = opts;
    const fixed = fixedNamespaces && [...new Set(fixedNamespaces)].sort();
    const scope = allNamespaces ? "*" : (fixed?.join(",") ?? "");
    const id = `${type.group}/${type.version}/${type.plural}?${opts.labelSelector ?? ""}&${opts.fieldSelector ?? ""}#${mode}@${scope}`;
    let inf = this.informers.get(id);
    if (!inf) {
      inf = new Informer(this.opts.client, type, {
        ...rest,
        namespaces: allNamespaces ? undefined : (fixed ?? this.namespaceList),
        ...(fixed || allNamespaces
          ? {}
          : { chooseScope: (t, namespaces) => this.chooseScope(t, namespaces, opts.labelSelector) }),
        log: this.opts.log,
      });
      if (fixed || allNamespaces) this.fixedScope.add(inf);
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
    opts: ManagedInformerOptions = {},
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

  /**
   * An informer for a kind that may not be served (a CRD installed later, or never): started once
   * discovery finds one of `kind.versions` served (the first), moved when that changes, stopped
   * and forgotten when the kind goes. Optional (a refusal stops it, it never holds readiness), and
   * while none runs the reader reads the kind live. Discovery is looked at again whenever a CRD
   * changes (see watchDiscovery, which this turns on). `onStart` is given each informer as it is
   * started, before its first list, so a controller can be woken by the kind's objects (and by the
   * kind becoming served) without the caller knowing when that happens; `onGone` is told when the
   * kind is no longer served (its CRD deleted), so the controller hears of that too.
   */
  informerWhenServed(
    kind: OptionalKind,
    opts: Omit<ManagedInformerOptions, "optional"> = {},
    onStart?: (informer: Informer<KubeObject>) => void,
    onGone?: () => void,
  ): void {
    this.watchDiscovery();
    const w = new InformerWhenServed(kind, {
      find: (apiVersion, k) => this.opts.client.resources.find(apiVersion, k),
      start: (type) => {
        const inf = this.informer(type, { ...opts, optional: true });
        onStart?.(inf);
        return inf;
      },
      retire: (inf) => this.retire(inf),
      ...(onGone ? { gone: onGone } : {}),
      stopped: () => this.stopped,
      log: this.opts.log.child({ target: this.opts.target }),
    });
    this.whenServed.push(w);
    if (this.informersStarted && !this.stopped) this.checkServed([w]);
  }

  /**
   * Resolves once discovery has nothing left to look at: no check of an optional kind under way and
   * no later look scheduled after a CRD change (tests, benchmarks: what follows sends no discovery
   * request of its own).
   */
  discoverySettled(): Promise<void> {
    if (this.discoveryIdle()) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  private discoveryIdle(): boolean {
    // The CRD watch's first list is a look at discovery too (unless the watch was refused).
    if (this.stopped) return true;
    const crds = this.crdInformer;
    const listing = crds !== undefined && !crds.hasSynced && crds.refused.length === 0;
    return !listing && this.discoveryChecks === 0 && this.discoveryTimers.size === 0;
  }

  private settleIfIdle(): void {
    if (this.discoveryIdle()) for (const w of this.settleWaiters.splice(0)) w();
  }

  private checkServed(which: InformerWhenServed[] = this.whenServed): void {
    for (const w of which) {
      this.discoveryChecks++;
      void w.check().finally(() => {
        this.discoveryChecks--;
        this.settleIfIdle();
      });
    }
  }

  /** Stops an informer and takes it out of this manager: the reader no longer answers from it. */
  private retire(inf: Informer<KubeObject>): void {
    for (const [id, i] of this.informers) if (i === inf) this.informers.delete(id);
    this.fixedScope.delete(inf);
    const done = inf.stop();
    this.retiring.add(done);
    void done.finally(() => this.retiring.delete(done));
  }

  /**
   * Keeps discovery's answers "this kind is not served" until a CustomResourceDefinition appears,
   * changes or goes (a metadata-only watch of them), so a per-pass question such as "is the Gateway
   * API installed?" costs no request. Without the right to watch CRDs (the watch is optional),
   * discovery is asked as before.
   */
  watchDiscovery(): void {
    if (this.stopKeepingMisses) return;
    const inf = this.informer<KubeObject>(CUSTOM_RESOURCE_DEFINITION, { metadataOnly: true, optional: true });
    this.crdInformer = inf;
    const mapper = this.opts.client.resources;
    let keeping = false;
    // A CRD is named <plural>.<group> and serves only that group: the others' answers are kept.
    const forget = (crd: KubeObject) => {
      const name = crd.metadata.name ?? "";
      const dot = name.indexOf(".");
      if (dot < 0) mapper.refresh();
      else mapper.forgetGroup(name.slice(dot + 1));
    };
    const changed = (crd: KubeObject) => {
      if (!keeping) return;
      forget(crd);
      this.checkServed();
      // A new CRD's kind is served moments after its event (once Established), and a deleted one's
      // goes moments after its (later on a loaded server): asked about in between, the answer
      // would be kept, so its group is forgotten a few more times after.
      for (const ms of [2_000, 10_000, 30_000]) {
        const t = setTimeout(() => {
          this.discoveryTimers.delete(t);
          if (!this.stopped) {
            forget(crd);
            this.checkServed();
          }
          this.settleIfIdle();
        }, ms);
        t.unref();
        this.discoveryTimers.add(t);
      }
    };
    // Every change counts: a status update is how a CRD becomes Established (served).
    inf.addHandler({ add: changed, update: (_old, crd) => changed(crd), delete: changed });
    this.stopKeepingMisses = () => {};
    void inf.waitForSync().then(() => {
      if (this.stopped) return;
      keeping = true;
      // Whatever was found missing before the list completed is asked again once.
      mapper.refresh();
      this.stopKeepingMisses = mapper.keepMisses();
      this.checkServed();
      this.settleIfIdle();
    });
  }

  /** Adds a controller; one added while the controllers already run starts at once. */
  add(controller: Controller): void {
    this.controllers.push(controller);
    if (this.controllersStarted && !this.stopped) controller.start();
  }

  /** Ready once every informer has listed: reconciles then see a complete cache. */
  /** Until stop(): while the target runs (as leader or standby), its admission checks answer. */
  get running(): boolean {
    return !this.stopped;
  }

  get ready(): boolean {
    return this.required().every((i) => i.hasSynced);
  }

  /** The informers readiness and liveness wait on: optional ones may be refused and never sync. */
  private required(): Informer<KubeObject>[] {
    return [...this.informers.values()].filter((i) => !i.optional);
  }

  /** One line per informer that has not listed yet; empty when ready. */
  readinessProblems(): string[] {
    return this.required()
      .filter((i) => !i.hasSynced)
      .map((i) => `${this.opts.target}: informer ${i.type.plural}: cache not synced yet`);
  }

  /** Why this manager is not alive (stuck informers, queues or leader election); empty when it is. */
  livenessProblems(thresholdMs: number): string[] {
    const problems = livenessProblems(this.required(), this.controllers, thresholdMs);
    const election = this.stopped ? undefined : this.elector?.stuckReason();
    if (election) problems.push(election);
    return problems.map((p) => `${this.opts.target}: ${p}`);
  }

  /** How each informer watches now, for logs, benchmarks and tests. */
  informerScopes(): { resource: string; scope: WatchScope; watches: number; synced: boolean }[] {
    return [...this.informers.values()].map((i) => ({
      resource: i.type.plural,
      scope: i.watchScope,
      watches: i.scopes.length,
      synced: i.hasSynced,
    }));
  }

  /** The namespaces this target sees now; undefined means all. */
  get namespaces(): string[] | undefined {
    return this.namespaceList && [...this.namespaceList];
  }

  /**
   * Changes the namespaces this target sees, without a restart: every informer starts watching the
   * ones added and stops watching (and forgets the objects of) the ones removed. Only for a target
   * started with a namespace list; one that sees every namespace has nothing to add.
   */
  setNamespaces(namespaces: string[]): void {
    if (!this.namespaceList)
      throw new Error(`manager ${this.opts.target}: watches every namespace; none can be set`);
    const next = [...new Set(namespaces)].sort();
    const before = this.namespaceList;
    this.namespaceList = next;
    for (const inf of this.informers.values()) if (!this.fixedScope.has(inf)) inf.setNamespaces(next);
    const added = next.filter((n) => !before.includes(n));
    const removed = before.filter((n) => !next.includes(n));
    if (added.length + removed.length > 0)
      this.opts.log.info({ target: this.opts.target, added, removed }, "namespaces changed");
  }

  /** Asked once per resource: informers of one kind with other selectors share the answer. */
  private mayWatchEverywhere(type: ResourceType): Promise<boolean> {
    const key = `${type.group}/${type.plural}`;
    let answer = this.clusterWideAccess.get(key);
    if (!answer) {
      const c = this.opts.client;
      answer = (async () =>
        (await mayClusterWide(c, type, "list")) && (await mayClusterWide(c, type, "watch")))();
      // A failed review is asked again by the next informer rather than remembered.
      answer.catch(() => this.clusterWideAccess.delete(key));
      this.clusterWideAccess.set(key, answer);
    }
    return answer;
  }

  private async chooseScope(
    type: ResourceType,
    namespaces: string[],
    selector?: string,
  ): Promise<WatchScope> {
    const policy = this.opts.watchScope ?? "auto";
    let scope: WatchScope = policy === "auto" ? "namespaces" : policy;
    let why = policy === "auto" ? "" : "configured";
    if (policy === "auto") {
      const from = this.opts.clusterWatchFrom ?? DEFAULT_CLUSTER_WATCH_FROM;
      if (namespaces.length < from) why = `fewer than ${from} namespaces`;
      else {
        const allowed = await this.mayWatchEverywhere(type);
        scope = allowed ? "cluster" : "namespaces";
        why = allowed
          ? "allowed to list and watch every namespace"
          : "not allowed to list and watch every namespace";
      }
    }
    this.opts.log.info(
      {
        target: this.opts.target,
        resource: type.plural,
        labelSelector: selector,
        namespaces: namespaces.length,
        scope,
        why,
      },
      scope === "cluster"
        ? "one cluster-wide watch, filtered to the target's namespaces"
        : "one watch per namespace",
    );
    return scope;
  }

  async waitForCacheSync(): Promise<void> {
    await Promise.all(this.required().map((i) => i.waitForSync()));
  }

  /** Starts informers, waits for leadership (if configured), then starts controllers. Returns once they run. */
  async start(): Promise<void> {
    this.informersStarted = true;
    for (const i of this.informers.values()) i.start();
    // Looked at once now, also for a process not allowed to watch CRDs (then only now).
    this.checkServed();
    if (this.elector) {
      this.leading = this.elector.acquire(this.abort.signal, () => this.lostLeadership());
      if (!(await this.leading)) return;
    }
    await this.waitForCacheSync();
    if (this.abort.signal.aborted || !this.isLeader) return;
    this.controllersStarted = true;
    for (const c of this.controllers) c.start();
    this.opts.log.info(
      { target: this.opts.target, controllers: this.controllers.map((c) => c.name) },
      "controllers started",
    );
  }

  /** Runs from the elector's deadline timer: every controller halts before anything else can run. */
  private lostLeadership(): void {
    for (const c of this.controllers) c.halt();
    (this.opts.onLostLeadership ?? (() => process.exit(1)))();
  }

  /**
   * Graceful stop within the shutdown deadline: no new keys, reconciles see their signal aborted
   * and are awaited, events are flushed, the Lease is released, watches close. A step that runs
   * over is abandoned, but the Lease release always gets its share of the time.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const total = this.opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const deadline = performance.now() + total;
    const left = () => deadline - performance.now();
    // Kept for the Lease release: a quarter of the budget, at most 5 s.
    const releaseBudget = Math.min(5_000, total / 4);
    this.abort.abort();
    const finished = await within(Promise.all(this.controllers.map((c) => c.stop())), left() - releaseBudget);
    if (!finished) {
      this.opts.log.warn(
        { target: this.opts.target, shutdownTimeoutMs: total },
        "shutdown deadline: reconciles still running are abandoned; releasing the Lease",
      );
    }
    await within(this.events.flush(), left() - releaseBudget);
    await this.elector?.release(Math.max(1, left()));
    await within(
      Promise.all([...this.informers.values()].map((i) => i.stop()).concat([...this.retiring])),
      left(),
    );
    this.stopKeepingMisses?.();
    for (const t of this.discoveryTimers) clearTimeout(t);
    this.discoveryTimers.clear();
    this.settleIfIdle();
    this.reader.close();
  }
}
