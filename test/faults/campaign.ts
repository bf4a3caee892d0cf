import { pathToFileURL } from "node:url";
import { CONFIGMAP, LEASE, NAMESPACE, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { sharedEnv, uniqueName } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { BAO_WRITES_PRELOAD, BaoWriteRecorder } from "./bao-recorder.js";
import { sameAsBaseline } from "./compare.js";
import {
  type Checkpoints,
  type Cut,
  type Lifecycle,
  momentOf,
  type NamedCrash,
  type Outage,
  type OutageMoment,
  type Phases,
  writesOf,
} from "./lifecycle.js";
import { OperatorProcess } from "./operator-process.js";
import { crashPoints } from "./sample.js";
import { type RecordedWrite, WriteLog, WriteProxy } from "./write-proxy.js";

export interface RunResult {
  /** The write after which the operator was killed; undefined for the run without faults. */
  crashAt?: number;
  /** The outage of this run (begun after write `afterWrite` when its moment is a share of the writes). */
  outage?: Outage & { afterWrite?: number };
  /** How many writes the run had made when its outage began. */
  outageAfterWrite?: number;
  /** false when the run made fewer writes than crashAt (timing varies): no crash happened. */
  reached: boolean;
  writes: RecordedWrite[];
  /** Where the lifecycle's phases began in `writes`. */
  phases: Phases;
  checkpoints?: Checkpoints;
  violations: string[];
  seconds: number;
  operatorTail?: string;
}

/**
 * The `index`th write (1: the first) after the mark of `phase`: the same moment of a phase whatever
 * earlier phases wrote. With `backend`, the `index`th write to that backend (of the phase, or of
 * the run when `phase` is unset).
 */
export interface PhaseCrash {
  phase?: string;
  index: number;
  backend?: string;
  /** Only writes of this kind count (`writeKind`): the `index`th of them. */
  kind?: string;
}

/** A write's kind: backend, method and path, the namespace left out (each run has its own). */
export function writeKind(w: RecordedWrite): string {
  return `${w.backend} ${w.method} ${w.path.replace(/\/namespaces\/[^/]+/, "/namespaces/*")}`;
}

export interface Row {
  lifecycle: string;
  fault: string;
  /** Writes of the run without faults: the crash points there are. */
  writes: number;
  points: number[];
  runs: number;
  survived: number;
  notReached: number;
  violations: number;
  failures: RunResult[];
}

export interface CampaignOptions {
  client: KubeClient;
  /** Every crash point when true; otherwise `sample` of them picked with `seed`. */
  all: boolean;
  sample: number;
  seed: number;
  /** With `all`, crash points from this one on (default 1). */
  from?: number;
  /** With `all`, crash points up to this one (default: the last): a long campaign run in chunks. */
  to?: number;
  /** Exactly these crash points (of the phase's writes with `phase`); overrides `all` and `sample`. */
  points?: number[];
  /** Crash points only among the writes of this phase of the run without faults (all of them with `all`). */
  phase?: string;
  /** One crash point per kind of write among the candidates, at the first write of that kind. */
  kinds?: boolean;
  /** Crash points only among the writes to this backend ("kube", "bao"); N counts those writes. */
  backend?: string;
  /** Crash points (default true). */
  kills?: boolean;
  /** The lifecycle's outages, one run each (default false). */
  outages?: boolean;
  /** Which of them (args.ts outageChosen): all when unset. */
  outageChosen?: (o: Outage) => boolean;
  /**
   * The API server itself, when the campaign owns it: a "kube" outage then stops it for real (every
   * client loses it, the harness's too); without it only the operator's proxy goes down.
   */
  apiServer?: { stop(): Promise<void>; start(): Promise<void> };
  say(line: string): void;
}

// Kinds a lifecycle's operator might create in its namespace: any of them left at the end, new
// since the run began and owned by nothing, is a leak.
const LEAK_KINDS: ResourceType[] = [CONFIGMAP, SECRET, LEASE, SERVICE_ACCOUNT];

async function namesIn(
  client: KubeClient,
  ns: string,
  extra: ResourceType[] = [],
): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  for (const kind of [...LEAK_KINDS, ...extra])
    for (const o of (await client.list(kind, { namespace: ns })).items)
      out.set(`${kind.kind}/${o.metadata.name}`, (o.metadata.ownerReferences ?? []).length > 0);
  return out;
}

/**
 * One run of `lifecycle`: without faults, or killing the operator right after write `crashAt` (a
 * number, the first write a named crash point matches, or the `index`th write of a phase counted
 * from that phase's mark in this run), or taking one backend away for
 * `outage.seconds` right after write `outage.afterWrite`.
 */
export async function runOnce(
  lifecycle: Lifecycle,
  opts: CampaignOptions,
  crashAt?: number | NamedCrash | PhaseCrash,
  baseline?: Checkpoints,
  outage?: Outage & { afterWrite?: number },
): Promise<RunResult> {
  const { client, say } = opts;
  const started = performance.now();
  const ns = uniqueName("faults");
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  const dir = makeTempDir("faults");
  const log = new WriteLog();
  const proxies: WriteProxy[] = [];
  const closers: (() => Promise<void>)[] = [];
  let op: OperatorProcess | undefined;
  let restarted: Promise<void> | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  let healed: Promise<string[]> | undefined;
  const result: RunResult = {
    crashAt: typeof crashAt === "number" ? crashAt : undefined,
    outage,
    reached: crashAt === undefined && outage === undefined,
    writes: log.writes,
    phases: [],
    violations: [],
    seconds: 0,
  };
  try {
    const run = await lifecycle.prepare({
      client,
      namespace: ns,
      say,
      phase: (name) => result.phases.push({ name, firstWrite: log.count + 1 }),
      writes: log.writes,
      outage,
    });
    cleanup = run.cleanup?.bind(run);
    const kube = await WriteProxy.kube(run.kube?.kubeconfigPath ?? sharedEnv().kubeconfigPath, {
      backend: "kube",
      log,
      host: run.kube?.host,
    });
    proxies.push(kube);
    const proxied: Record<string, string> = {};
    const byName = new Map<string, WriteProxy>([["kube", kube]]);
    for (const [name, address] of Object.entries(run.backends)) {
      const p = await WriteProxy.plain(address, { backend: name, log, ignore: run.ignore?.[name] });
      proxies.push(p);
      byName.set(name, p);
      proxied[name] = p.url;
    }
    // The operator's OpenBao writes, reported from inside its process (bao-writes-preload.ts).
    const recorder =
      run.baoWrites &&
      (await BaoWriteRecorder.start(log, run.baoWrites.host, run.baoWrites.record !== false));
    if (recorder) closers.push(() => recorder.close());
    // A fault the lifecycle injects itself (an OpenBao pod killed), not a backend taken down.
    const injected = outage && run.faults?.[outage.backend];
    const cut = outage && cutOf(outage.backend, byName, run.cuts, recorder || undefined, opts.apiServer);
    if (outage && !cut && !injected)
      throw new Error(`outage of ${outage.backend}: the run has no such backend, cut or fault`);
    const before = await namesIn(client, ns, run.leakKinds);
    const operator = new OperatorProcess(
      dir,
      kube.url,
      run.section(proxied),
      { ...run.env, ...(recorder && { FAULTS_BAO_RECORDER: recorder.url }) },
      run.wrap,
      recorder ? ["--import", pathToFileURL(BAO_WRITES_PRELOAD).href] : [],
    );
    op = operator;
    if (crashAt !== undefined)
      log.arm(
        typeof crashAt === "number"
          ? crashAt
          : "match" in crashAt
            ? crashAt.match
            : inPhase({ ...crashAt, phases: result.phases }),
        (w) => {
          result.reached = true;
          result.crashAt = w.seq;
          operator.killNow();
          restarted = operator.restart();
        },
      );
    if (outage) {
      const moment = momentOf(outage);
      const sleep = (s: number) => new Promise<void>((r) => setTimeout(r, s * 1000));
      /** Watches for the fault to show for `seconds` (or until `heal` resolves), then what was missing. */
      const watch = async (heal: () => Promise<void>): Promise<string[]> => {
        const watching = run.duringOutage?.(outage.backend, outage);
        await heal();
        const missing = (await watching?.stop()) ?? [];
        if (!operator.alive()) missing.push(`the operator exited during the ${outage.backend} fault`);
        return missing;
      };
      const begin = (): void => {
        result.reached = true;
        // Whatever goes wrong in the harm or the heal is this run's violation, never an unhandled
        // rejection that ends the whole campaign while the lifecycle is still driven.
        const failed = (e: Error) => [`the ${outage.backend} fault went wrong: ${e.message}`];
        healed = (async (): Promise<string[]> => {
          if (injected) {
            let done: Awaited<ReturnType<typeof injected>>;
            try {
              done = await injected();
            } catch (e) {
              return [`the fault ${outage.backend} was not injected: ${(e as Error).message}`];
            }
            result.outageAfterWrite = log.count;
            say(`${outage.backend}: ${typeof done === "string" ? done : done.did}`);
            return watch(async () => {
              await sleep(outage.seconds);
              if (typeof done !== "string") say(`${outage.backend}: ${await done.heal()}`);
            });
          }
          await cut!.down("request" in moment ? moment.request : undefined);
          result.outageAfterWrite = log.count;
          say(`${outage.backend} down for ${outage.seconds} s after write ${log.count}`);
          return watch(async () => {
            await sleep(outage.seconds);
            await cut!.up();
            say(`${outage.backend} back`);
          });
        })().catch(failed);
      };
      if ("request" in moment) begin();
      else
        log.arm(
          "share" in moment
            ? (outage.afterWrite ?? 1)
            : "write" in moment
              ? (w) => (!moment.phase || result.phases.at(-1)?.name === moment.phase) && moment.match(w)
              : inPhase({ phase: moment.phase, index: moment.index ?? 1, phases: result.phases }),
          begin,
        );
    }
    operator.start();
    try {
      result.checkpoints = await run.drive();
    } catch (e) {
      result.violations.push(`the lifecycle did not finish: ${(e as Error).message}`);
    }
    await restarted;
    if (healed) result.violations.push(...(await healed));
    if (result.checkpoints) {
      result.violations.push(...run.check(result.checkpoints, baseline ?? result.checkpoints));
      if (baseline) result.violations.push(...sameAsBaseline(result.checkpoints, baseline));
    }
    for (const [name, owned] of await namesIn(client, ns, run.leakKinds))
      if (!before.has(name) && !owned && !run.keptOnPurpose?.(name))
        result.violations.push(`left behind, owned by nothing: ${name}`);
  } finally {
    await op?.stop();
    if (result.violations.length > 0) result.operatorTail = op?.tail();
    log.disarm();
    await cleanup?.().catch(() => {});
    for (const p of proxies) await p.close();
    for (const c of closers) await c();
    removeTempDir(dir);
    await client.delete(NAMESPACE, ns).catch(() => {});
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/**
 * The backend an outage takes away, as something to take down and bring back: "kube" is the API
 * server itself when the campaign owns it, else the operator's proxy to it; a plain backend its
 * proxy; "bao-net" OpenBao as the operator's process reaches it (the recorder's black hole); else a
 * cut the lifecycle offers.
 */
export function cutOf(
  backend: string,
  proxies: Map<string, WriteProxy>,
  cuts: Record<string, Cut> | undefined,
  recorder: BaoWriteRecorder | undefined,
  apiServer?: { stop(): Promise<void>; start(): Promise<void> },
): Cut | undefined {
  if (backend === "kube" && apiServer) return { down: () => apiServer.stop(), up: () => apiServer.start() };
  const p = proxies.get(backend);
  if (p) return { down: () => p.down(), up: () => p.up() };
  if (backend === BAO_NET) return recorder?.cut();
  return cuts?.[backend];
}

/** The network between the operator's process and OpenBao (needs the preload: PreparedRun.baoWrites). */
export const BAO_NET = "bao-net";

/**
 * The `index`th write of `phase` in this run (1: the first after its mark), while it is the last
 * phase marked; with `backend`, the `index`th write to it (of the phase, or of the run). Called
 * for every write while armed, so it counts them itself.
 */
export function inPhase(c: PhaseCrash & { phases: Phases }): (w: RecordedWrite) => boolean {
  let seen = 0;
  return (w) => {
    const last = c.phases.at(-1);
    if (c.phase !== undefined && last?.name !== c.phase) return false;
    if (c.kind !== undefined) {
      if (writeKind(w) !== c.kind) return false;
      seen++;
      return seen === c.index;
    }
    if (c.backend === undefined) return !!last && w.seq === last.firstWrite + c.index - 1;
    if (w.backend !== c.backend) return false;
    seen++;
    return seen === c.index;
  };
}

/** The run without faults, then a run per chosen crash point and per outage; rows of the table. */
export async function campaignRows(lifecycle: Lifecycle, opts: CampaignOptions): Promise<Row[]> {
  const base = opts.kills === false ? undefined : await campaign(lifecycle, opts);
  const rows = base ? [base.row] : [];
  const outages = (lifecycle.outages ?? []).filter((o) => opts.outageChosen?.(o) ?? true);
  if (!opts.outages || outages.length === 0) return rows;
  const baseline = base?.baseline ?? (await runOnce(lifecycle, opts));
  if (!baseline.checkpoints || baseline.violations.length > 0) return rows;
  for (const o of outages) {
    const moment = momentOf(o);
    const afterWrite =
      "share" in moment ? Math.max(1, Math.floor(baseline.writes.length * moment.share)) : undefined;
    const at = afterWrite && baseline.writes[afterWrite - 1];
    opts.say(
      `${lifecycle.name}: ${o.backend} down ${o.seconds} s ${at ? `after write ${afterWrite}/${baseline.writes.length} (${at.backend} ${at.method} ${at.path})` : describeMoment(moment)}`,
    );
    const r = await runOnce(lifecycle, opts, undefined, baseline.checkpoints, { ...o, afterWrite });
    const row: Row = {
      lifecycle: lifecycle.name,
      fault:
        o.label ??
        `${o.backend} ${o.backend === "kube" && opts.apiServer ? "stopped" : "unreachable"} ${o.seconds} s`,
      writes: baseline.writes.length,
      points: r.outageAfterWrite !== undefined ? [r.outageAfterWrite] : afterWrite ? [afterWrite] : [],
      runs: 1,
      survived: r.violations.length === 0 ? 1 : 0,
      notReached: r.reached ? 0 : 1,
      violations: r.violations.length,
      failures: r.violations.length ? [r] : [],
    };
    opts.say(
      `${lifecycle.name}: ${o.backend} outage: ${r.reached ? "" : "not reached, "}${r.violations.length === 0 ? "ok" : `${r.violations.length} violations`} in ${r.seconds.toFixed(1)} s`,
    );
    for (const v of r.violations.slice(0, 5)) opts.say(`  - ${v}`);
    rows.push(row);
  }
  return rows;
}

/** An outage's moment in words, for the campaign's progress lines. */
export function describeMoment(m: OutageMoment): string {
  if ("share" in m) return `after ${Math.round(m.share * 100)}% of the writes`;
  if ("write" in m) return `at ${m.write}${m.phase ? ` (phase ${m.phase})` : ""}`;
  if ("phase" in m) return `at write ${m.index ?? 1} of phase ${m.phase}`;
  return `at the first request to ${m.request.source}`;
}

/** The run without faults, then a run per chosen crash point; one row of the table. */
export async function campaign(
  lifecycle: Lifecycle,
  opts: CampaignOptions,
): Promise<{ row: Row; baseline: RunResult }> {
  const { say } = opts;
  say(`${lifecycle.name}: run without faults (recording the operator's writes)`);
  const base = await runOnce(lifecycle, opts);
  const row: Row = {
    lifecycle: lifecycle.name,
    fault: `SIGKILL after ${opts.backend ? `${opts.backend} ` : ""}write N${opts.phase ? ` of phase ${opts.phase}` : ""}`,
    writes: base.writes.length,
    points: [],
    runs: 0,
    survived: 0,
    notReached: 0,
    violations: 0,
    failures: [],
  };
  if (base.violations.length > 0 || !base.checkpoints) {
    row.failures.push(base);
    row.violations = base.violations.length;
    say(`${lifecycle.name}: the run without faults failed: ${base.violations.join("; ")}`);
    return { row, baseline: base };
  }
  say(
    `${lifecycle.name}: ${base.writes.length} writes in ${base.seconds.toFixed(1)} s (${summary(base.writes)})`,
  );
  // The candidates: every write, or those of one phase, counted from the phase's mark (a write
  // number alone drifts between runs as earlier phases make a status write more or fewer).
  const phase = opts.phase;
  const backend = opts.backend;
  const candidates = (phase ? writesOf(phase, base.phases, base.writes) : base.writes).filter(
    (w) => !backend || w.backend === backend,
  );
  if ((phase || backend) && candidates.length === 0)
    throw new Error(
      `${lifecycle.name} has no write${backend ? ` to ${backend}` : ""}${phase ? ` in a phase "${phase}"` : ""} (phases: ${base.phases.map((p) => p.name).join(", ")})`,
    );
  if (phase || backend) {
    say(
      `${lifecycle.name}: ${phase ? `phase ${phase}` : "the run"} has ${candidates.length} writes${backend ? ` to ${backend}` : ""} (${candidates[0]!.seq}..${candidates.at(-1)!.seq} of the run):`,
    );
    for (const [i, w] of candidates.entries())
      say(`  ${i + 1} ${w.backend} ${w.method} ${w.path} → ${w.status}`);
    row.writes = candidates.length;
  }
  // With kinds, point N is the first write of the Nth kind the candidates show, wherever it falls.
  const firsts = opts.kinds
    ? candidates.filter((w, i) => candidates.findIndex((x) => writeKind(x) === writeKind(w)) === i)
    : candidates;
  if (opts.kinds) {
    say(`${lifecycle.name}: ${firsts.length} kinds of write, one crash point each (at its first):`);
    for (const [i, w] of firsts.entries()) say(`  ${i + 1} ${writeKind(w)}`);
  }
  const count = firsts.length;
  row.points = opts.points
    ? opts.points.filter((n) => n <= count)
    : crashPoints(count, opts.all ? count : opts.sample, opts.seed).filter(
        (n) => !opts.all || (n >= (opts.from ?? 1) && n <= (opts.to ?? Number.POSITIVE_INFINITY)),
      );
  if (opts.kinds) row.fault += ", one per kind of write";
  for (const n of row.points) {
    const r = await runOnce(
      lifecycle,
      opts,
      opts.kinds
        ? { phase, index: 1, kind: writeKind(firsts[n - 1]!) }
        : phase || backend
          ? { phase, index: n, backend }
          : n,
      base.checkpoints,
    );
    row.runs++;
    if (!r.reached) row.notReached++;
    if (r.violations.length === 0) row.survived++;
    else {
      row.violations += r.violations.length;
      row.failures.push(r);
    }
    const at = firsts[n - 1];
    // The write this run was killed at, when it is not the one the run without faults made there.
    const hit = r.reached && r.crashAt !== undefined ? r.writes[r.crashAt - 1] : undefined;
    const moved =
      hit && at && writeKind(hit) !== writeKind(at) ? ` [this run's: ${hit.method} ${hit.path}]` : "";
    const of = [phase && `phase ${phase}`, backend && `${backend} writes`].filter(Boolean).join(", ");
    const which = opts.kinds
      ? `kind ${n}/${count}${of ? ` of ${of}` : ""}`
      : of
        ? `${n}/${candidates.length} of ${of}`
        : `${n}/${base.writes.length}`;
    say(
      `${lifecycle.name}: kill after write ${which} (${at?.backend} ${at?.method} ${at?.path})${moved}` +
        `: ${r.reached ? "" : "not reached, "}${r.violations.length === 0 ? "ok" : `${r.violations.length} violations`} in ${r.seconds.toFixed(1)} s`,
    );
    for (const v of r.violations.slice(0, 5)) say(`  - ${v}`);
  }
  return { row, baseline: base };
}

function summary(writes: RecordedWrite[]): string {
  const by = new Map<string, number>();
  for (const w of writes) by.set(`${w.backend} ${w.method}`, (by.get(`${w.backend} ${w.method}`) ?? 0) + 1);
  return [...by].map(([k, v]) => `${k} ${v}`).join(", ");
}

/** lifecycle × fault → runs, survived, violations, as a Markdown table. */
export function table(rows: Row[]): string {
  const lines = [
    "| lifecycle | fault | crash points (of writes) | runs | survived | not reached | violations |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of rows)
    lines.push(
      `| ${r.lifecycle} | ${r.fault} | ${r.points.length} of ${r.writes} | ${r.runs} | ${r.survived} | ${r.notReached} | ${r.violations} |`,
    );
  return lines.join("\n");
}
