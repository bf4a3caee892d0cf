import type { VaultSeed } from "../../apis/vaultseed.js";
import {
  VaultSeedEventReason as E,
  VaultSeedReason as R,
  type VaultSeedEventReasonType,
  VaultSeedManagers,
  type VaultSeedReasonType,
} from "../../apis/vaultseed-names.js";
import type { KubeClient } from "../../runtime/client.js";
import { findCondition } from "../../runtime/conditions.js";
import {
  type ReconcileContext,
  type ReconcileResult,
  requeueAfter,
  retry,
} from "../../runtime/controller.js";
import { errorMessage, isNotFound } from "../../runtime/errors.js";
import type { KindEvents } from "../../runtime/events.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../runtime/finalizers.js";
import type { Informer } from "../../runtime/informer.js";
import type { Logger } from "../../runtime/log.js";
import { StatusWriter } from "../../runtime/status.js";
import type { ResourceType } from "../../runtime/types.js";
import { BackendError } from "./backend-errors.js";
import type { PathClaims } from "./claims.js";
import type { VaultTargetConfig } from "./config.js";
import type { ValueGenerator } from "./generate.js";
import type { KvState } from "./kv.js";
import {
  lastReconcileCompleted,
  objectsNotReady,
  plannedChanges,
  rotationNext,
  writesTotal,
} from "./metrics.js";
import type { MountDirectory } from "./mounts.js";
import { countByAction, PLAN_ACTIONS, summarizeChanges } from "./plan-summary.js";
import {
  nextRotationAt,
  OWNER_MARKER_KEY,
  ownerMarkerOf,
  type Plan,
  plan,
  recordedRotationToken,
} from "./planner.js";
import type { ReadCache } from "./read-cache.js";
import type { RefGraph } from "./ref-graph.js";
import { readRefValue } from "./refs.js";
import { readRefusal, writeRefusal } from "./scope.js";
import { conditionsFor, type Verdict } from "./status.js";
import { UnconfirmedWrites } from "./unconfirmed-writes.js";
import { type CompiledSeed, compileSeed } from "./validate.js";

export const FINALIZER = "ohmlab.fr/vaultseed-delete";
export const FIELD_MANAGER = VaultSeedManagers.fieldManager;
const TARGET = "vault";
/** A plan that hits a compare-and-set conflict is made again at most this many times per reconcile. */
const MAX_REPLANS = 5;
const READY_MESSAGE = "the path holds what is declared";

/** The KV operations the reconciler uses; KvClient implements them. `signal` aborts the request. */
export interface KvBackend {
  read(path: string, signal?: AbortSignal): Promise<KvState>;
  write(path: string, data: Record<string, unknown>, cas: number, signal?: AbortSignal): Promise<number>;
  writeMetadata(path: string, customMetadata: Record<string, string>, signal?: AbortSignal): Promise<void>;
  deleteAll(path: string, signal?: AbortSignal): Promise<void>;
  /** A value from OpenBao's password policy `name` (<policy:NAME>). */
  generatePassword?(name: string, signal?: AbortSignal): Promise<string>;
}

export interface VaultSeedReconcilerDeps {
  type: ResourceType;
  client: KubeClient;
  informer: Informer<VaultSeed>;
  kv: KvBackend;
  events: KindEvents<VaultSeedReasonType | VaultSeedEventReasonType>;
  config: VaultTargetConfig;
  generator: ValueGenerator;
  reads: ReadCache;
  refs: RefGraph;
  /** What engine serves each mount: nothing is written to a mount that is not KV v2. */
  mounts: MountDirectory;
  /** Which object wins a path several objects declare. */
  claims: PathClaims;
  /** Requeues other objects (those copying from a path just written). */
  enqueue: (key: string) => void;
  now?: () => Date;
}

interface Outcome {
  verdict: Verdict;
  managedKeys?: string[];
  kvVersion?: number;
  rotationToken?: string;
  /** What to do next; undefined means the quiet resync. */
  next?: "wait";
  /** When rotate.every next rotates (ms since the epoch), as the path now records it. */
  nextRotationMs?: number;
}

/** What a pass has already written, so that a failure after a write still reports it. */
interface Progress {
  kvVersion?: number;
  managedKeys?: string[];
}

/** Messages of unexpected errors are capped: they are ours, but need not be long to be useful. */
const MAX_ERROR_MESSAGE = 300;

/**
 * Reconciles one VaultSeed: read the path, plan, write with compare-and-set, report. A pass that
 * finds nothing to change writes nothing, neither to OpenBao nor to the API server.
 */
export class VaultSeedReconciler {
  private readonly notReady = new Map<string, string>();
  private readonly statuses: StatusWriter<VaultSeed["status"]>;
  private readonly unconfirmed = new UnconfirmedWrites();
  private readonly now: () => Date;

  constructor(private readonly d: VaultSeedReconcilerDeps) {
    this.now = d.now ?? (() => new Date());
    this.statuses = new StatusWriter<VaultSeed["status"]>({
      client: d.client,
      type: d.type,
      fieldManager: FIELD_MANAGER,
      plane: statusPlane,
    });
    for (const reason of Object.values(R)) objectsNotReady.set({ target: TARGET, reason }, 0);
    // A written status is dropped at the object's next reconcile once the cache holds it (see
    // StatusMemory.freshest), or here when the object goes.
    d.informer.addHandler({
      delete: (o) => {
        this.statuses.forget(`${o.metadata.namespace}/${o.metadata.name}`);
        this.unconfirmed.forget(`${o.metadata.namespace}/${o.metadata.name}`);
      },
    });
  }

  readonly reconcile = async (key: string, ctx: ReconcileContext): Promise<ReconcileResult> => {
    const cached = this.d.informer.get(key);
    if (!cached) {
      this.forget(key);
      return undefined;
    }
    const obj = this.statuses.freshest(key, cached);
    const outcome = obj.metadata.deletionTimestamp
      ? await this.finalize(obj, ctx.log, ctx.signal)
      : await this.converge(obj, ctx.log, ctx.signal);
    if (!outcome) return undefined;
    await this.writeStatus(obj, outcome, ctx.log, ctx.signal);
    lastReconcileCompleted.set({ target: TARGET }, this.now().getTime() / 1000);
    this.trackReadiness(key, outcome.verdict);
    this.trackRotation(obj, outcome);
    // Waiting on the backend or on another object backs off in the runtime (5 s doubling to 5 minutes).
    if (outcome.next === "wait") return retry(outcome.verdict.reason);
    // A rotation due before the next resync is made on time, not up to a resync late. One already
    // past (observe-only, or a rotation that could not be stored) waits for the resync: no hot loop.
    const untilRotation =
      outcome.nextRotationMs === undefined ? 0 : outcome.nextRotationMs - this.now().getTime();
    const resync = this.d.config.resyncMs;
    return requeueAfter(untilRotation > 0 ? Math.max(1_000, Math.min(resync, untilRotation)) : resync);
  };

  /**
   * The next-rotation gauge follows what the path records. A pass that failed before reading it
   * leaves the gauge as it was, so a rotation that cannot be written shows as overdue.
   */
  private trackRotation(obj: VaultSeed, outcome: Outcome): void {
    const labels = { target: TARGET, namespace: obj.metadata.namespace!, name: obj.metadata.name! };
    if (outcome.nextRotationMs !== undefined) rotationNext.set(labels, outcome.nextRotationMs / 1000);
    else if ((obj.spec.rotate as { every?: unknown } | undefined)?.every === undefined)
      rotationNext.remove(labels);
  }

  private async converge(obj: VaultSeed, log: Logger, signal: AbortSignal): Promise<Outcome | undefined> {
    const compiled = compileSeed(obj.spec);
    if (!compiled.ok) {
      const first = compiled.problems[0]!;
      const message = compiled.problems
        .map((p) => (p.key && !p.message.startsWith(`${p.key}: `) ? `${p.key}: ${p.message}` : p.message))
        .join("; ");
      return { verdict: { ready: false, stalled: true, reason: first.reason, message } };
    }
    const seed = compiled.seed;
    // Before anything else, the finalizer included: an application object outside its prefixes
    // makes the controller do nothing at all for it.
    const refusal = this.scopeRefusal(obj.metadata.namespace!, seed);
    if (refusal) return { verdict: { ready: false, stalled: true, reason: R.Forbidden, message: refusal } };
    const policyOutcome = await this.ensureDeletionPolicy(obj, seed, signal);
    if (policyOutcome) return policyOutcome;
    const progress: Progress = {};
    try {
      return await this.seedPath(obj, seed, log, signal, progress);
    } catch (e) {
      return { ...this.failure(e, log), ...progress };
    }
  }

  /** Why the allow-list refuses this object's path or one of its references, if it does. */
  private scopeRefusal(namespace: string, seed: CompiledSeed): string | undefined {
    const scopes = this.d.config.applications;
    const write = writeRefusal(scopes, namespace, seed.path);
    if (write) return write;
    for (const [key, template] of seed.declarations) {
      if (template.kind !== "ref") continue;
      const read = readRefusal(scopes, namespace, key, template.ref.path);
      if (read) return read;
    }
    return undefined;
  }

  /** Delete needs the target's allowDelete; then the object carries the finalizer, otherwise it does not. */
  private async ensureDeletionPolicy(
    obj: VaultSeed,
    seed: CompiledSeed,
    signal: AbortSignal,
  ): Promise<Outcome | undefined> {
    if (seed.deletionPolicy === "Delete") {
      if (!this.d.config.allowDelete) {
        return {
          verdict: {
            ready: false,
            stalled: true,
            reason: R.Forbidden,
            message:
              "deletionPolicy Delete is not allowed: the vault target's configuration does not set allowDelete: true",
          },
        };
      }
      if (!this.d.config.observeOnly && !hasFinalizer(obj, FINALIZER))
        await addFinalizer(this.d.client, this.d.type, obj, FINALIZER, signal);
    } else if (hasFinalizer(obj, FINALIZER) && !this.d.config.observeOnly) {
      await removeFinalizer(this.d.client, this.d.type, obj, FINALIZER, signal);
    }
    return undefined;
  }

  private async seedPath(
    obj: VaultSeed,
    seed: CompiledSeed,
    log: Logger,
    signal: AbortSignal,
    progress: Progress,
  ): Promise<Outcome> {
    const identity = { namespace: obj.metadata.namespace!, name: obj.metadata.name! };
    const mount = await this.d.mounts.check(seed.path, signal);
    if (!mount.ok) {
      return { verdict: { ready: false, stalled: true, reason: mount.reason, message: mount.message } };
    }
    // A reference read from a KV v1 mount would look like a missing source forever: say why instead.
    for (const ref of seed.refs) {
      const source = await this.d.mounts.check(ref.path, signal);
      if (!source.ok) {
        const message = `the source of ${ref.id}: ${source.message}`;
        return { verdict: { ready: false, stalled: true, reason: source.reason, message } };
      }
    }
    const cycle = this.d.refs.cycleOf(seed.path);
    const claimant = this.d.claims.claimantOf(seed.path);
    // Only this object's own namespace is surely watched: elsewhere, absence from the cache proves nothing.
    const markerOwnerExists = (owner: string): boolean | undefined =>
      owner.startsWith(`${identity.namespace}/`) ? this.d.informer.get(owner) !== undefined : undefined;
    let managedKeys: readonly string[] | undefined = obj.status?.managedKeys;
    for (let attempt = 0; ; attempt++) {
      // After a conflict, a read already in flight may predate the other writer: read anew.
      let current =
        attempt === 0
          ? await this.d.reads.readFresh(seed.path, () => this.d.kv.read(seed.path, signal))
          : await this.d.kv.read(seed.path, signal);
      if (attempt > 0) this.d.reads.set(seed.path, current);
      const key = `${identity.namespace}/${identity.name}`;
      if (current.customMetadata[OWNER_MARKER_KEY] !== undefined) this.unconfirmed.forget(key);
      else if (current.exists) {
        // Our own write whose answer was lost: the path is ours, with no grace to wait out.
        const landed = this.unconfirmed.landed(key, obj.metadata.uid ?? "", seed.path, current.data);
        if (landed) {
          managedKeys = [...new Set([...(managedKeys ?? []), ...landed])].sort();
          current = { ...current, ageMs: undefined };
        }
      }
      const refs = await this.resolveRefs(seed, signal);
      const generator = { ...this.d.generator, policy: (name: string) => this.passwordFrom(name, signal) };
      const planFor = (state: KvState) =>
        plan({
          object: identity,
          spec: obj.spec,
          // The adoption grace guards a write; observe-only writes nothing, so it reports at once.
          current: this.d.config.observeOnly ? { ...state, ageMs: undefined } : state,
          refs,
          managedKeys,
          generator,
          refCycle: cycle,
          claimant,
          markerOwnerExists,
          now: this.now(),
        });
      const p = await planFor(current);
      if (this.d.config.observeOnly) {
        // An adoption plans the data side only once the marker is stored; observe-only stores
        // nothing, so it plans that side against the marker it would have written.
        const rotation = {
          nextRotationMs: nextRotationAt(seed, current.customMetadata, this.now().getTime()),
        };
        if (!p.planAgain || !p.customMetadata) return { ...this.observeOnly(obj, p, current), ...rotation };
        const after = await planFor({ ...current, customMetadata: p.customMetadata });
        return {
          ...this.observeOnly(obj, { ...after, changes: [...p.changes, ...after.changes] }, current),
          ...rotation,
        };
      }
      const written = await this.apply(obj, seed.path, p, current, log, signal, progress);
      if (written === "conflict") {
        if (attempt + 1 >= MAX_REPLANS) {
          return {
            verdict: {
              ready: false,
              reconciling: true,
              reason: R.BackendUnavailable,
              message: `${seed.path} kept changing while being written; retrying`,
            },
            next: "wait",
          };
        }
        log.info({ path: seed.path }, "the path changed since it was read; reading and planning again");
        continue;
      }
      managedKeys = p.managedKeys;
      if (p.planAgain && attempt + 1 < MAX_REPLANS) continue;
      return {
        ...this.outcomeOf(p, written.version, written.metadata),
        nextRotationMs: nextRotationAt(seed, written.metadata, this.now().getTime()),
      };
    }
  }

  private passwordFrom(name: string, signal: AbortSignal): Promise<string> {
    if (!this.d.kv.generatePassword) return this.d.generator.policy(name);
    return this.d.kv.generatePassword(name, signal);
  }

  /** Reference sources come from this pass's reads when fresh, otherwise from one read each. */
  private async resolveRefs(
    seed: CompiledSeed,
    signal: AbortSignal,
  ): Promise<Map<string, string | undefined>> {
    const values = new Map<string, string | undefined>();
    for (const ref of seed.refs) {
      const source = await this.d.reads.readShared(ref.path, () => this.d.kv.read(ref.path, signal));
      values.set(ref.id, source.exists ? readRefValue(source.data, ref.key) : undefined);
    }
    return values;
  }

  /** Writes data (with CAS) then custom metadata, as the plan orders. */
  private async apply(
    obj: VaultSeed,
    path: string,
    p: Plan,
    current: KvState,
    log: Logger,
    signal: AbortSignal,
    progress: Progress,
  ): Promise<"conflict" | { version: number; metadata: Record<string, string> }> {
    let version = current.version;
    let data = current.data;
    if (p.data) {
      try {
        version = await this.d.kv.write(path, p.data, p.expectedVersion, signal);
        data = p.data;
      } catch (e) {
        if (e instanceof BackendError && e.failure === "conflict") {
          this.d.reads.forget(path);
          return "conflict";
        }
        // No answer is not a refusal: the write may have landed (see UnconfirmedWrites).
        if (!(e instanceof BackendError) || e.failure === "unavailable") {
          const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
          this.unconfirmed.record(key, obj.metadata.uid ?? "", path, p.data, p.managedKeys);
        }
        throw e;
      }
      this.unconfirmed.forget(`${obj.metadata.namespace}/${obj.metadata.name}`);
      // Should the metadata write below fail, the status still follows what was written.
      progress.kvVersion = version;
      progress.managedKeys = p.managedKeys;
      this.d.reads.set(path, { exists: true, version, data, customMetadata: current.customMetadata });
      for (const dependent of this.d.refs.dependentsOf(path)) this.d.enqueue(dependent);
    }
    let metadata = current.customMetadata;
    if (p.customMetadata) {
      await this.d.kv.writeMetadata(path, p.customMetadata, signal);
      metadata = p.customMetadata;
      this.d.reads.set(path, { exists: true, version, data, customMetadata: metadata });
    }
    if (p.changes.length > 0) {
      for (const [action, n] of countByAction(p.changes)) writesTotal.inc({ target: TARGET, action }, n);
      const summary = summarizeChanges(p.changes);
      log.info({ path, changes: summary }, "wrote path");
      this.d.events.record(obj, {
        type: "Normal",
        reason: eventReason(p),
        action: "Write",
        note: `${path}: ${summary}`,
      });
    }
    return { version, metadata };
  }

  private outcomeOf(p: Plan, version: number, metadata: Record<string, string>): Outcome {
    const base = {
      managedKeys: p.managedKeys,
      kvVersion: version,
      rotationToken: recordedRotationToken(metadata),
    };
    const o = p.outcome;
    switch (o.kind) {
      case "ok":
        return {
          ...base,
          verdict: {
            ready: true,
            reason: R.Reconciled,
            // Fixed: what was written goes to events and logs, so the next quiet pass finds the
            // status unchanged and writes nothing.
            message: READY_MESSAGE,
          },
        };
      case "pending":
        return {
          ...base,
          verdict: { ready: false, reconciling: true, reason: o.reason, message: o.message },
          next: "wait",
        };
      case "conflict-owner":
        return { ...base, verdict: { ready: false, reason: o.reason, message: o.message } };
      default:
        return { ...base, verdict: { ready: false, stalled: true, reason: o.reason, message: o.message } };
    }
  }

  private observeOnly(obj: VaultSeed, p: Plan, current: KvState): Outcome {
    const labels = { target: TARGET, namespace: obj.metadata.namespace!, name: obj.metadata.name! };
    const counts = countByAction(p.changes);
    for (const action of PLAN_ACTIONS) plannedChanges.set({ ...labels, action }, counts.get(action) ?? 0);
    const drift = summarizeChanges(p.changes);
    const base = {
      kvVersion: current.version,
      rotationToken: recordedRotationToken(current.customMetadata),
      managedKeys: obj.status?.managedKeys,
    };
    if (p.outcome.kind !== "ok" && !(p.outcome.kind === "pending" && drift)) {
      const o = this.outcomeOf(p, current.version, current.customMetadata);
      return { ...o, managedKeys: base.managedKeys, verdict: { ...o.verdict, drift } };
    }
    if (drift)
      return {
        ...base,
        verdict: {
          ready: false,
          reason: R.ObserveOnly,
          message: `observe-only: a real run would write: ${drift}`,
          drift,
        },
      };
    return {
      ...base,
      verdict: { ready: true, reason: R.Reconciled, message: READY_MESSAGE, drift: "" },
    };
  }

  /**
   * Every failure of a pass ends in a condition: what OpenBao refused, with its message, or, for
   * an error nobody expected, ReconcileFailed. Either way the object is reported and the other
   * objects go on; only Kubernetes API errors (thrown outside this) are retried silently.
   */
  private failure(e: unknown, log: Logger): Outcome {
    if (e instanceof BackendError) {
      const waiting = (reason: VaultSeedReasonType): Outcome => ({
        verdict: { ready: false, reconciling: true, reason, message: e.message },
        next: "wait",
      });
      const stalled = (reason: VaultSeedReasonType): Outcome => ({
        verdict: { ready: false, stalled: true, reason, message: e.message },
      });
      switch (e.failure) {
        case "forbidden":
          return waiting(R.Forbidden);
        case "unavailable":
        case "conflict":
          return waiting(R.BackendUnavailable);
        case "no-mount":
          return stalled(R.MountNotFound);
        default:
          return stalled(R.BackendRejected);
      }
    }
    const message = errorMessage(e).slice(0, MAX_ERROR_MESSAGE);
    log.error({ err: message }, "could not handle the object");
    return {
      verdict: {
        ready: false,
        stalled: true,
        reason: R.ReconcileFailed,
        message: `the controller could not handle this object: ${message}`,
      },
    };
  }

  /** deletionPolicy Delete: remove the path if it carries this object's marker, then the finalizer. */
  private async finalize(obj: VaultSeed, log: Logger, signal: AbortSignal): Promise<Outcome | undefined> {
    if (!hasFinalizer(obj, FINALIZER)) return undefined;
    const path = obj.spec.path;
    const policy = obj.spec.deletionPolicy ?? "Retain";
    if (policy === "Delete") {
      if (!this.d.config.allowDelete) {
        return {
          verdict: {
            ready: false,
            stalled: true,
            reason: R.Forbidden,
            message:
              "removing the path is not allowed: the vault target's configuration does not set allowDelete: true",
          },
        };
      }
      if (this.d.config.observeOnly) {
        return {
          verdict: {
            ready: false,
            reason: R.ObserveOnly,
            message: `observe-only: a real run would delete ${path}`,
            drift: "1 delete-path",
          },
        };
      }
      const refusal = writeRefusal(this.d.config.applications, obj.metadata.namespace!, path);
      try {
        if (refusal) {
          // The allow-list changed since the finalizer was added: the path is no longer this namespace's.
          this.d.events.record(obj, {
            type: "Warning",
            reason: R.Forbidden,
            action: "Delete",
            note: `${path} was left in place: ${refusal}`,
          });
          throw new ScopeSkip();
        }
        const current = await this.d.kv.read(path, signal);
        const me = ownerMarkerOf({ namespace: obj.metadata.namespace!, name: obj.metadata.name! });
        const owner = current.customMetadata[OWNER_MARKER_KEY];
        if (owner === me) {
          await this.d.kv.deleteAll(path, signal);
          this.d.reads.forget(path);
          writesTotal.inc({ target: TARGET, action: "delete-path" });
          log.info({ path }, "deleted path");
          this.d.events.record(obj, {
            type: "Normal",
            reason: R.Deleted,
            action: "Delete",
            note: `deleted ${path} with every version`,
          });
        } else if (current.exists || owner !== undefined) {
          this.d.events.record(obj, {
            type: "Warning",
            reason: R.OwnedByAnother,
            action: "Delete",
            note: `${path} was left in place: it does not carry this object's owner marker`,
          });
        }
      } catch (e) {
        if (!(e instanceof ScopeSkip)) return this.failure(e, log);
      }
    }
    try {
      await removeFinalizer(this.d.client, this.d.type, obj, FINALIZER, signal);
    } catch (e) {
      // A conflict means the object changed since it was read: the error requeues the key and the
      // next pass removes the finalizer from the fresh copy. Swallowing it would leave the object
      // Terminating until a restart, since an edit that changes neither spec nor finalizers
      // enqueues nothing.
      if (!isNotFound(e)) throw e;
    }
    this.forget(`${obj.metadata.namespace}/${obj.metadata.name}`);
    return undefined;
  }

  /** Applies the status only when something in it changed, so a quiet resync writes nothing. */
  private async writeStatus(obj: VaultSeed, o: Outcome, log: Logger, signal: AbortSignal): Promise<void> {
    const prev = obj.status ?? {};
    const conditions = conditionsFor(prev.conditions, o.verdict, obj.metadata.generation, this.now());
    const status: Record<string, unknown> = {
      observedGeneration: obj.metadata.generation,
      conditions,
      managedKeys: o.managedKeys ?? prev.managedKeys,
      kvVersion: o.kvVersion ?? prev.kvVersion,
      rotationToken: o.rotationToken ?? prev.rotationToken,
    };
    for (const k of Object.keys(status)) if (status[k] === undefined) delete status[k];
    const before = findCondition(prev.conditions, "Ready");
    try {
      await this.statuses.write(obj, status as VaultSeed["status"], {
        signal,
        onChange: () => {
          if (!o.verdict.ready && (before?.reason !== o.verdict.reason || before?.status !== "False"))
            this.d.events.record(obj, {
              type: "Warning",
              reason: o.verdict.reason,
              action: "Reconcile",
              note: o.verdict.message,
            });
        },
      });
    } catch (e) {
      log.warn({ err: errorMessage(e) }, "could not write status");
      throw e;
    }
  }

  /** Moves the key between the not-ready counts in O(1): a pass over n objects stays O(n). */
  private trackReadiness(key: string, v: Verdict): void {
    const before = this.notReady.get(key);
    const after = v.ready ? undefined : v.reason;
    if (before === after) return;
    if (before !== undefined) objectsNotReady.dec({ target: TARGET, reason: before });
    if (after !== undefined) objectsNotReady.inc({ target: TARGET, reason: after });
    if (after === undefined) this.notReady.delete(key);
    else this.notReady.set(key, after);
  }

  private forget(key: string): void {
    this.statuses.forget(key);
    this.unconfirmed.forget(key);
    const [namespace, name] = key.split("/");
    for (const action of PLAN_ACTIONS)
      plannedChanges.remove({ target: TARGET, namespace: namespace!, name: name!, action });
    rotationNext.remove({ target: TARGET, namespace: namespace!, name: name! });
    this.trackReadiness(key, { ready: true, reason: R.Reconciled, message: "" });
  }
}

/** The fields of a VaultSeed's status this controller writes; the comparison looks at these only. */
function statusPlane(s: VaultSeed["status"]): unknown {
  const { observedGeneration, conditions, managedKeys, kvVersion, rotationToken } = s ?? {};
  return { observedGeneration, conditions, managedKeys, kvVersion, rotationToken };
}

/** Ends the deletion attempt of a path outside the allow-list; the finalizer is removed all the same. */
class ScopeSkip extends Error {}

/** The event reason for a write: the most telling action in it. */
function eventReason(p: Plan): VaultSeedEventReasonType {
  const actions = new Set(p.changes.map((c) => c.action));
  if (actions.has("adopt")) return E.Adopted;
  // A path created now (first time, or again after a metadata delete) gets fresh values anyway:
  // its rotation token is only recorded, nothing is rotated.
  if (actions.has("create-path")) return E.Wrote;
  if (actions.has("rotate-field") || actions.has("record-rotation")) return E.Rotated;
  if (actions.has("prune-field") && actions.size === 1) return E.Pruned;
  return E.Wrote;
}
