import type { KubeClient } from "../../src/runtime/client.js";
import type { ResourceType } from "../../src/runtime/types.js";
import type { RecordedWrite } from "./write-proxy.js";

/** What one run of a lifecycle saw at its named checkpoints, normalised so two runs compare equal. */
export type Checkpoints = Map<string, unknown>;

export interface RunContext {
  client: KubeClient;
  /** The run's own namespace (also its OpenBao prefix). */
  namespace: string;
  say(line: string): void;
  /**
   * Marks the start of a named phase of the lifecycle: the writes from here to the next mark are
   * that phase's (`--phase NAME` picks crash points among them; its invariants count them).
   */
  phase(name: string): void;
  /** The run's writes so far, every backend, in order (live: read it when needed). */
  readonly writes: readonly RecordedWrite[];
  /** The outage this run is under, if any (a lifecycle loads what that outage needs). */
  outage?: Outage;
}

/** Where each phase began: the number of the first write after its mark. */
export type Phases = { name: string; firstWrite: number }[];

/** The writes of phase `name` (from its mark to the next one), by `phases` of the same run. */
export function writesOf(name: string, phases: Phases, writes: readonly RecordedWrite[]): RecordedWrite[] {
  const i = phases.findIndex((p) => p.name === name);
  if (i < 0) return [];
  const end = phases[i + 1]?.firstWrite ?? writes.length + 1;
  return writes.filter((w) => w.seq >= phases[i]!.firstWrite && w.seq < end);
}

/** The backends besides the API server a run's operator talks to, by name, and their real addresses. */
export type Backends = Record<string, string>;

export interface PreparedRun {
  /**
   * The API server the operator talks to and where its recording proxy listens, when not the
   * harness's own (sharedEnv) on loopback: the node's, with the proxy on the host's end of the
   * node's veth.
   */
  kube?: { kubeconfigPath: string; host: string };
  /**
   * The operator's OpenBao writes recorded as crash points too (bao-writes-preload.ts), reported
   * to a recorder listening on `host` (where the operator's process reaches the harness).
   */
  baoWrites?: {
    host: string;
    /** false: the process is loaded for the OpenBao black hole ("bao-net") only, its writes not numbered. */
    record?: boolean;
  };
  /** Wraps the operator's command (the node's inCluster: its network namespace and cluster DNS). */
  wrap?: (argv: string[]) => string[];
  /** Real addresses of the other backends the operator uses; the campaign puts a WriteProxy in front of each. */
  backends: Backends;
  /** Writes to these backends that change no data (a login) and are not crash points. */
  ignore?: Record<string, (method: string, path: string) => boolean>;
  /** The operator's `targets:` YAML, given the proxied addresses of `backends`. */
  section(proxied: Backends): string;
  /** Environment of the operator's process besides the harness's own (where its charts are, say). */
  env?: Record<string, string>;
  /** Kinds besides ConfigMap, Secret, Lease and ServiceAccount that are leaks when left owned by nothing. */
  leakKinds?: ResourceType[];
  /** Objects (`Kind/name`) the lifecycle leaves owned by nothing on purpose: hooks Helm keeps on uninstall. */
  keptOnPurpose?: (kindAndName: string) => boolean;
  /** Runs after the run, faults or not (the harness's own helpers stop here). */
  cleanup?(): Promise<void>;
  /**
   * Watches, while `backend` is down, for the failure to show where a user would look (the
   * objects' conditions); `stop` ends the watch and returns what was missing, one violation each.
   */
  duringOutage?(backend: string, outage?: Outage): { stop(): Promise<string[]> };
  /** Backends the lifecycle takes away itself, by the name an Outage's `backend` gives. */
  cuts?: Record<string, Cut>;
  /**
   * Faults the lifecycle injects itself, by the name an Outage's `backend` gives: each waits for
   * its moment (a phase of the lifecycle), does its harm and resolves, saying what it did, once the
   * harm is done; the run must still end in the invariants. A fault whose moment never came throws.
   * A fault that lasts until someone acts (a pod sealed by hand stays sealed) also says how it
   * heals: the campaign heals it once the outage's `seconds` of watching are over.
   */
  faults?: Record<string, () => Promise<string | InjectedFault>>;
  /** Drives the lifecycle to its end, recording checkpoints; throws when a step does not finish in time. */
  drive(): Promise<Checkpoints>;
  /** Invariants of this run alone and against the run without faults; each string is one violation. */
  check(run: Checkpoints, baseline: Checkpoints): string[];
}

/**
 * Where an outage begins. `share`: after that share of the run without faults' writes (0.1: early
 * on). `phase`: at the `index`th operator write (default 1) after that phase's mark, whatever
 * earlier phases wrote. `write`: at the first write `match` accepts (`write` says which in the
 * table), while `phase` (if given) is the last phase marked. `request`: at the first request to the backend whose path matches, before it is sent;
 * only a Cut that can see requests takes it (the OpenBao network, held in the operator's process).
 */
export type OutageMoment =
  | { share: number }
  | { phase: string; index?: number }
  | { write: string; match(w: RecordedWrite): boolean; phase?: string }
  | { request: RegExp };

/**
 * A backend the lifecycle can take away and give back itself (its S3 server stopped and started
 * again where the Job looks). `down(from)`, for a `request` moment, arms the cut at the first
 * request matching `from` and resolves once it has begun.
 */
export interface Cut {
  down(from?: RegExp): Promise<void>;
  up(): Promise<void>;
}

/** One backend gone for a while, once, mid-lifecycle. */
export interface Outage {
  /** "kube" (the API server as the operator reaches it), one of the lifecycle's backends, cuts or faults. */
  backend: string;
  /** The table's wording of the fault (default: "<backend> unreachable <seconds> s"). */
  label?: string;
  /** Where it begins: after this share of the run without faults' writes (0.1: early on). */
  at?: number;
  /** Where it begins, when not by `at`. */
  when?: OutageMoment;
  /**
   * How long the backend stays away; for a fault the lifecycle injects (a pod sealed or killed),
   * how long the harness watches for it to show, from the harm done.
   */
  seconds: number;
  /**
   * What must show while it lasts: conditions as `Type=Status/Reason` (`Type=Status` for any
   * reason; `… ~ words` for words its message must hold); one of them seen on the lifecycle's objects is enough. Unset: nothing is required
   * (the API server away from the operator: it can write no condition at all).
   */
  visible?: string[];
}

/** A fault done, and how the harness ends it (as whoever would, a person restarting a pod). */
export interface InjectedFault {
  did: string;
  heal(): Promise<string>;
}

/** The moment of `o`, `at` read as a share. */
export function momentOf(o: Outage): OutageMoment {
  return o.when ?? { share: o.at ?? 0 };
}

/**
 * Whether a condition matches one of `visible`'s `Type=Status/Reason` (or `Type=Status`) forms; a
 * form may end in ` ~ words` that the condition's message must contain (a wait whose reason is
 * generic, such as an upgrade's InProgress, says what it waits for in the message).
 */
export function shows(
  visible: readonly string[],
  c: { type: string; status: string; reason?: string; message?: string },
): string | undefined {
  return visible.find((v) => {
    const m = /^([^=]+)=([^/~ ]+)(?:\/([^~ ]+))?(?: ~ (.+))?$/.exec(v);
    if (!m) throw new Error(`visible: give Type=Status or Type=Status/Reason (then ~ words), got ${v}`);
    return (
      m[1] === c.type &&
      m[2] === c.status &&
      (m[3] === undefined || m[3] === c.reason) &&
      (m[4] === undefined || (c.message ?? "").includes(m[4]))
    );
  });
}

export interface Lifecycle {
  name: string;
  /** The outages this lifecycle is run under (`npm run faults -- --outages`). */
  outages?: Outage[];
  prepare(ctx: RunContext): Promise<PreparedRun>;
}

/** A crash point named by what the write is rather than by its number: the first write it matches. */
export interface NamedCrash {
  name: string;
  match(w: RecordedWrite): boolean;
}
