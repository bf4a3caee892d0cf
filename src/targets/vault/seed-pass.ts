/**
 * The shapes one VaultSeed pass passes between its parts (converge, finalize, outcome, report):
 * the reconciler's dependencies, what a pass ends with, and the constants they share.
 */
import type { VaultSeed } from "../../apis/vaultseed.js";
import type { VaultSeedEventReasonType, VaultSeedReasonType } from "../../apis/vaultseed-names.js";
import type { KubeClient } from "../../runtime/client.js";
import type { KindEvents } from "../../runtime/events.js";
import type { Informer } from "../../runtime/informer.js";
import type { StatusWriter } from "../../runtime/status.js";
import type { ResourceType } from "../../runtime/types.js";
import type { PathClaims } from "./claims.js";
import type { VaultTargetConfig } from "./config.js";
import type { ValueGenerator } from "./generate.js";
import type { KvState } from "./kv.js";
import type { MountDirectory } from "./mounts.js";
import type { PathPasses } from "./path-passes.js";
import type { ReadCache } from "./read-cache.js";
import type { RefGraph } from "./ref-graph.js";
import type { Verdict } from "./status.js";
import type { UnconfirmedWrites } from "./unconfirmed-writes.js";

export const FINALIZER = "ohmlab.fr/vaultseed-delete";
export const TARGET = "vault";
/** A plan that hits a compare-and-set conflict is made again at most this many times per reconcile. */
export const MAX_REPLANS = 5;
export const READY_MESSAGE = "the path holds what is declared";

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
  /** Passes under way on reference sources, which a copying pass waits for (path-passes.ts). */
  passes?: PathPasses;
  now?: () => Date;
}

export interface Outcome {
  verdict: Verdict;
  managedKeys?: string[];
  kvVersion?: number;
  rotationToken?: string;
  /** What to do next; undefined means the quiet resync. */
  next?: "wait";
  /** When rotate.every next rotates (ms since the epoch), as the path now records it. */
  nextRotationMs?: number;
}

/** A pass that decided nothing: it runs again once `until` settles, or after `boundMs` (path-passes.ts). */
export interface Deferred {
  deferred: { until: Promise<unknown>; boundMs: number; why: string };
}

/** What a pass has already written, so that a failure after a write still reports it. */
export interface Progress {
  kvVersion?: number;
  managedKeys?: string[];
}

/** What every part of a pass shares: the reconciler's dependencies and its memory of unconfirmed writes. */
export interface SeedPass {
  d: VaultSeedReconcilerDeps;
  unconfirmed: UnconfirmedWrites;
  /** The status writer, for the keys a write is about to add (kv-write.ts); the pass's report uses it too. */
  statuses: StatusWriter<VaultSeed["status"]>;
  now: () => Date;
  /** Drops everything kept for an object that is gone. */
  forget(key: string): void;
}
