import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { type KvLoadReport, LoadLedger, type ReadBack } from "./kv-ledger.js";

export { type KvLoadReport, summarizeLoad } from "./kv-ledger.js";

// A KV v2 client that keeps writing and reading while something happens to the cluster (a leader
// step-down, an upgrade), the way an application would: one sequential loop, a fresh connection per
// request to whatever address it was given (a Service spreads those over its ready pods), standby
// answers forwarded or redirected to the active node. Every write carries the next sequence number
// under its own key; at stop() every acknowledged write is read back: an acknowledged write that is
// missing or changed is lost. The ledger (kv-ledger.ts) does the counting.

export interface KvLoadOptions {
  /**
   * Where requests go, one after the other in turn. A real client has one: the cluster's client
   * Service. Against servers on loopback, pass every node's address to stand in for the Service
   * spreading connections over its pods.
   */
  addresses: string[];
  /** Token allowed to write and read the mount (and to create it, unless it exists). */
  token: string;
  /** PEM CA bundle for https addresses. */
  caPem?: string;
  /** Name checked in the server certificate (the Service's DNS name when addressing its IP). */
  serverName?: string;
  /** KV v2 mount, created when missing. Default "kvload". */
  mount?: string;
  /** Keys go under this path; a fresh one per run by default, so runs never see each other's keys. */
  prefix?: string;
  /** Pause between two iterations (a write, then a read). Default 50 ms. */
  intervalMs?: number;
  /** Per-request timeout; a request that hangs this long failed. Default 5 s. */
  timeoutMs?: number;
  /**
   * How long a read that finds the newest write missing (a standby behind the active node) is
   * retried before it counts as failed. Default 2 s.
   */
  staleRetryMs?: number;
  /** How often sys/leader is asked who is active. Default 250 ms. */
  leaderPollMs?: number;
  /** How long startKvLoad waits for the mount to take a first write. Default 120 s. */
  readyTimeoutMs?: number;
  /**
   * Maps a standby's 307 Location (the active node's api_addr, often a cluster DNS name) to an
   * address this process reaches. Default: the Location as it is.
   */
  resolveRedirect?: (location: URL) => URL;
  now?: () => number;
}

export interface KvLoad {
  /** Counters so far (nothing read back yet: `unverified` counts every acknowledged write). */
  snapshot(): KvLoadReport;
  /** Sequence numbers acknowledged so far, ascending. */
  acknowledgedSequences(): number[];
  /** The KV v2 data path (under the mount) of one sequence number's key. */
  keyPath(seq: number): string;
  /** Resolves once `count` more writes than now have been acknowledged: proof the load runs. */
  acknowledgedMore(count: number, timeoutMs?: number): Promise<void>;
  /** Stops the loop, reads every acknowledged write back and reports. */
  stop(opts?: { verifyTimeoutMs?: number }): Promise<KvLoadReport>;
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: OpenBao's answers are read loosely
  body: any;
  /** X-Vault-Index: the storage index this answer reflects (OpenBao 2.7+). */
  index?: string;
  location?: string;
}

type Verdict = { ok: boolean; error?: string; mismatch?: boolean; stale?: boolean };

const MAX_REDIRECTS = 3;

/** Creates the mount if needed, waits for it to take a write, then starts the loop. */
export async function startKvLoad(opts: KvLoadOptions): Promise<KvLoad> {
  if (opts.addresses.length === 0) throw new Error("kv-load: addresses must name at least one address");
  const now = opts.now ?? Date.now;
  const mount = (opts.mount ?? "kvload").replace(/^\/+|\/+$/g, "");
  const prefix = opts.prefix ?? `run-${randomBytes(4).toString("hex")}`;
  const interval = opts.intervalMs ?? 50;
  const staleRetryMs = opts.staleRetryMs ?? 2000;
  const kv = new KvHttp(opts);
  const keyPath = (seq: number) => `${mount}/data/${prefix}/${seq}`;

  await ensureMount(kv, mount, opts.addresses.length, opts.readyTimeoutMs ?? 120_000);

  const ledger = new LoadLedger(now());
  const waiters: Array<{ target: number; resolve: () => void }> = [];
  let stopping = false;
  let seq = 0;
  const runId = randomBytes(4).toString("hex");
  /** OpenBao's storage index after the newest acknowledged write (2.7+ answers writes with it). */
  let latestIndex: string | undefined;
  const requestTimed = async (op: "write" | "read", f: () => Promise<Verdict>) => {
    const startedAt = now();
    let r: Verdict;
    try {
      r = await f();
    } catch (err) {
      r = { ok: false, error: transportError(err) };
    }
    ledger.record({ op, startedAt, endedAt: now(), ...r });
    return r.ok;
  };

  /**
   * Reads the newest acknowledged write the way a careful client does against read-serving
   * standbys: with the write's index when OpenBao gave one, and retrying a stale answer (404, an
   * older value, "index not yet applied") for a short while. Only a stale answer that outlives
   * that time, or any other error, is a failed read.
   */
  const readLatest = async (latest: { seq: number; value: string }): Promise<Verdict> => {
    const deadline = now() + staleRetryMs;
    let stale = false;
    for (;;) {
      const r = await readValue(kv, keyPath(latest.seq), ledger, latestIndex);
      if (r.kind === "value" && r.value === latest.value) return { ok: true, stale };
      // With an index, a standby that has not applied it answers 412 (or 429, as 2.7 does here).
      const staleAnswer =
        r.kind === "missing" ||
        r.kind === "value" ||
        (latestIndex !== undefined && (r.status === 412 || r.status === 429));
      if (!staleAnswer) return { ok: false, error: r.error };
      if (now() >= deadline)
        return r.kind === "value"
          ? { ok: false, mismatch: true }
          : { ok: false, error: r.kind === "missing" ? "read: acknowledged key missing" : r.error };
      stale = true;
      await new Promise((res) => setTimeout(res, 50));
    }
  };

  const loop = (async () => {
    while (!stopping) {
      const n = ++seq;
      const value = `${runId}-${n}`;
      let index: string | undefined;
      const wrote = await requestTimed("write", async () => {
        const a = await kv.send("POST", keyPath(n), { data: { value } }, ledger);
        index = a.index;
        return a.status === 200 || a.status === 204 ? { ok: true } : { ok: false, error: failure(a) };
      });
      if (wrote) {
        ledger.acknowledge(n, value);
        latestIndex = index;
        for (const w of waiters.splice(0))
          if (ledger.acknowledged >= w.target) w.resolve();
          else waiters.push(w);
      }
      // Read back the newest acknowledged write: the one most likely to be missing on a lagging node.
      const latest = ledger.latestAcknowledged();
      if (latest && !stopping) await requestTimed("read", () => readLatest(latest));
      if (!stopping && interval > 0) await new Promise((r) => setTimeout(r, interval));
    }
  })();

  // Who is active, as the cluster tells a client. Failures here are not client failures: they only
  // leave a gap in the sightings.
  const leaderPoll = (async () => {
    while (!stopping) {
      try {
        const a = await kv.send("GET", "sys/leader", undefined, undefined);
        if (a.status === 200) ledger.observeLeader(String(a.body?.leader_address ?? ""), now());
      } catch {
        // a gap
      }
      if (!stopping) await new Promise((r) => setTimeout(r, opts.leaderPollMs ?? 250));
    }
  })();

  return {
    snapshot: () => ledger.report(now()),
    acknowledgedSequences: () => ledger.acknowledgedWrites().map((w) => w.seq),
    keyPath,
    acknowledgedMore(count, timeoutMs = 60_000) {
      const target = ledger.acknowledged + count;
      if (count <= 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          const i = waiters.findIndex((w) => w.resolve === done);
          if (i >= 0) waiters.splice(i, 1);
          reject(
            new Error(
              `kv-load: ${count} more acknowledged writes did not come within ${timeoutMs} ms (${ledger.acknowledged}/${target})`,
            ),
          );
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiters.push({ target, resolve: done });
      });
    },
    async stop(stopOpts = {}) {
      stopping = true;
      await Promise.all([loop, leaderPoll]);
      const stoppedAt = now();
      ledger.settle(
        await verify(
          kv,
          ledger,
          keyPath,
          `${mount}/data/${prefix}/barrier`,
          stopOpts.verifyTimeoutMs ?? 120_000,
        ),
      );
      return ledger.report(stoppedAt);
    },
  };
}

/**
 * Reads every acknowledged write back, consistently: first a barrier write, then each read carries
 * the barrier's index, so whichever node answers has applied every write before the barrier (Raft
 * applies its log in order) and a 404 or another value is final: that write is lost. A node behind
 * the barrier, a transport error or a 5xx is retried until the deadline. OpenBao before 2.7 sends no
 * index: a missing or changed answer is then retried for a while (a standby catching up) before it
 * counts as lost.
 */
async function verify(
  kv: KvHttp,
  ledger: LoadLedger,
  keyPath: (seq: number) => string,
  barrierPath: string,
  timeoutMs: number,
): Promise<Map<number, ReadBack>> {
  const deadline = Date.now() + timeoutMs;
  const results = new Map<number, ReadBack>();
  let index: string | undefined;
  for (;;) {
    const a = await kv.send("POST", barrierPath, { data: { value: "barrier" } }).catch(() => undefined);
    if (a && (a.status === 200 || a.status === 204)) {
      index = a.index;
      break;
    }
    if (Date.now() > deadline) {
      for (const w of ledger.acknowledgedWrites()) results.set(w.seq, "error");
      return results;
    }
    await new Promise((res) => setTimeout(res, 250));
  }
  const catchUpMs = 10_000;
  for (const w of ledger.acknowledgedWrites()) {
    const settleBy = Date.now() + catchUpMs;
    for (;;) {
      const r: ReadResult = await readValue(kv, keyPath(w.seq), undefined, index).catch((e) => ({
        kind: "error" as const,
        error: transportError(e),
      }));
      const answer: ReadBack | undefined =
        r.kind === "value"
          ? r.value === w.value
            ? "ok"
            : "mismatch"
          : r.kind === "missing"
            ? "missing"
            : undefined;
      if (answer === "ok" || (answer && (index !== undefined || Date.now() > settleBy))) {
        results.set(w.seq, answer);
        break;
      }
      if (Date.now() > deadline) {
        results.set(w.seq, answer ?? "error");
        break;
      }
      await new Promise((res) => setTimeout(res, answer ? 100 : 250));
    }
  }
  return results;
}

type ReadResult =
  | { kind: "value"; value: string }
  | { kind: "missing" }
  | { kind: "error"; status?: number; error: string };

async function readValue(
  kv: KvHttp,
  path: string,
  ledger: LoadLedger | undefined,
  index?: string,
): Promise<ReadResult> {
  const a = await kv.send("GET", path, undefined, ledger, index ? { "x-vault-index": index } : {});
  if (a.status === 200) return { kind: "value", value: String(a.body?.data?.data?.value ?? "") };
  if (a.status === 404) return { kind: "missing" };
  return { kind: "error", status: a.status, error: failure(a) };
}

/**
 * Enables the KV v2 mount unless it exists, then waits until it takes writes through every address
 * (a standby refuses them until it has applied the mount's own upgrade step).
 */
async function ensureMount(kv: KvHttp, mount: string, addresses: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const needed = Math.max(3, addresses);
  let inARow = 0;
  let last = "";
  let mounted = false;
  for (;;) {
    try {
      if (!mounted) {
        const a = await kv.send("POST", `sys/mounts/${mount}`, { type: "kv", options: { version: "2" } });
        // 400 "path is already in use" is a mount made earlier (by this helper or the test).
        if (a.status === 204 || a.status === 200 || (a.status === 400 && /already in use/.test(failure(a))))
          mounted = true;
        else last = failure(a);
      }
      if (mounted) {
        // A new KV v2 mount refuses writes until its own upgrade step has run.
        const a = await kv.send("POST", `${mount}/data/kv-load-ready`, { data: { value: "ready" } });
        if (a.status === 200 || a.status === 204) {
          if (++inARow >= needed) return;
          continue;
        }
        inARow = 0;
        last = failure(a);
      }
    } catch (err) {
      last = transportError(err);
    }
    if (Date.now() > deadline)
      throw new Error(
        `kv-load: the KV v2 mount ${mount} did not take a write within ${timeoutMs} ms: ${last}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** HTTP status and OpenBao's error strings; never a request body or the token. */
function failure(a: Answer): string {
  const errors = Array.isArray(a.body?.errors)
    ? (a.body.errors as unknown[]).filter((e) => typeof e === "string").join("; ")
    : "";
  return `HTTP ${a.status}${errors ? `: ${errors.slice(0, 200)}` : ""}`;
}

function transportError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e?.code ?? (e instanceof Error ? e.message : String(err));
}

/** Requests to the given addresses in turn, following a standby's 307 to the active node. */
class KvHttp {
  private next = 0;

  constructor(private readonly opts: KvLoadOptions) {}

  async send(
    method: string,
    path: string,
    body: unknown,
    ledger?: LoadLedger,
    extra: Record<string, string> = {},
  ): Promise<Answer> {
    const base = this.opts.addresses[this.next++ % this.opts.addresses.length]!;
    let url = new URL(`/v1/${path}`, base);
    for (let hops = 0; ; hops++) {
      const a = await this.once(method, url, body, extra);
      const location = a.location;
      if (a.status !== 307 || !location || hops >= MAX_REDIRECTS) return a;
      const target = new URL(location, url);
      url = this.opts.resolveRedirect ? this.opts.resolveRedirect(target) : target;
      ledger?.redirectFollowed();
    }
  }

  private once(method: string, url: URL, body: unknown, extra: Record<string, string>): Promise<Answer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      ...extra,
      "x-vault-token": this.opts.token,
      accept: "application/json",
    };
    if (payload) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
    }
    const secure = url.protocol === "https:";
    const options: https.RequestOptions = {
      method,
      host: url.hostname,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers,
      timeout: this.opts.timeoutMs ?? 5000,
      // A fresh connection per request: through a Service each one may land on another pod.
      agent: false,
    };
    if (secure) {
      options.ca = this.opts.caPem;
      options.servername = this.opts.serverName ?? url.hostname;
    }
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(options, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          const index = res.headers["x-vault-index"];
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            location: res.headers.location,
            index: Array.isArray(index) ? index[0] : index,
          });
        });
      });
      req.on("timeout", () => req.destroy(Object.assign(new Error("timed out"), { code: "ETIMEDOUT" })));
      req.on("error", reject);
      req.end(payload);
    });
  }
}
