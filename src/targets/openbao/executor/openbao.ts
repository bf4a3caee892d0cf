/**
 * The executor's few OpenBao calls over node:http(s), so the snapshot streams with backpressure
 * in both directions and the cluster's CA file is honoured without a global agent.
 */
import { readFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { http } from "../../../runtime/node-http.js";
import { type ExecutorAuth, jwtMounts } from "./contract.js";
import { Patience } from "./patience.js";

export interface BaoConnection {
  address: string;
  ca?: string;
}

/** An OpenBao call failed; the message has OpenBao's own error strings, never the token. */
export class BaoError extends Error {
  constructor(
    readonly status: number | undefined,
    message: string,
    /** The socket's error code (e.g. ECONNREFUSED) when no answer came at all. */
    readonly code?: string,
  ) {
    super(message);
    this.name = "BaoError";
  }
}

export async function connection(address: string, caFile?: string): Promise<BaoConnection> {
  return { address: address.replace(/\/+$/, ""), ca: caFile ? await readFile(caFile, "utf8") : undefined };
}

/** Starts a request; resolves with the response once its headers arrive. `body` is piped with backpressure. */
export function send(
  conn: BaoConnection,
  method: string,
  path: string,
  opts: { token?: string; body?: Readable | string; length?: number; signal?: AbortSignal } = {},
): Promise<IncomingMessage> {
  const url = new URL(`${conn.address}/v1/${path}`);
  const headers: Record<string, string> = {};
  if (opts.token) headers["x-vault-token"] = opts.token;
  if (typeof opts.body === "string") {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(Buffer.byteLength(opts.body));
  } else if (opts.length !== undefined) headers["content-length"] = String(opts.length);
  const request = url.protocol === "https:" ? httpsRequest : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ca: conn.ca, signal: opts.signal }, resolve);
    req.once("error", (err: NodeJS.ErrnoException) =>
      reject(new BaoError(undefined, `${method} /v1/${path}: ${err.message}`, err.code)),
    );
    if (opts.body === undefined) req.end();
    else if (typeof opts.body === "string") req.end(opts.body);
    else pipeline(opts.body, req).catch((err) => req.destroy(err));
  });
}

/**
 * Socket errors that mean nobody answers at the address yet: a Service whose endpoint is not
 * published (kube-proxy refuses), a pod restarting, a name not yet in DNS. OpenBao itself never
 * answers this way, so waiting on them cannot hide a refusal.
 */
const NOT_ANSWERING_YET = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** How long a Job waits for OpenBao to answer before it fails: a new cluster's pod becoming Ready. */
export const ANSWER_WAIT_MS = 120_000;

/**
 * Resolves once OpenBao answers at the address with any HTTP status (a sealed or standby node
 * answers too: what it says is the caller's business). Connection failures are retried with a
 * growing pause until `withinMs`; `onWaiting` hears each one. The Job's first real request must not
 * be the one that meets a Service without an endpoint: a streamed snapshot cannot be sent twice.
 */
export async function untilAnswering(
  conn: BaoConnection,
  opts: { signal?: AbortSignal; withinMs?: number; onWaiting?: (why: string) => void } = {},
): Promise<void> {
  const within = opts.withinMs ?? ANSWER_WAIT_MS;
  const patience = new Patience({
    withinMs: within,
    firstMs: 250,
    maxMs: 5000,
    signal: opts.signal,
    onWaiting: opts.onWaiting,
  });
  for (;;) {
    // One attempt never outlives the deadline: a dropped SYN would otherwise hang for minutes.
    const attempt = AbortSignal.timeout(Math.max(1, Math.min(10_000, patience.deadline - Date.now())));
    const signal = opts.signal ? AbortSignal.any([opts.signal, attempt]) : attempt;
    let why: string;
    let code: string | undefined;
    try {
      const res = await send(conn, "GET", "sys/health", { signal });
      res.resume();
      return;
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      code = err instanceof BaoError ? err.code : undefined;
      if (!attempt.aborted && !NOT_ANSWERING_YET.has(code ?? "")) throw err;
      why = attempt.aborted ? "GET /v1/sys/health: no answer" : (err as Error).message;
    }
    if (!(await patience.again(why)))
      throw new BaoError(
        undefined,
        `OpenBao did not answer at ${conn.address} within ${Math.round(within / 1000)} s: ${why}`,
        code,
      );
  }
}

/** How long a backup waits for Raft to be able to take a snapshot (a cluster that just formed). */
export const SNAPSHOT_READY_WAIT_MS = 60_000;

/**
 * Raft refuses a snapshot until it has applied its latest configuration entry ("cannot take
 * snapshot now, wait until the configuration entry at N has been applied"): a backup asked for
 * right after the cluster formed or a peer joined. Nothing was streamed, so asking again is safe.
 */
const RAFT_NOT_READY = /cannot take snapshot now/;

/**
 * Opens the snapshot stream, asking again with a growing pause (within `withinMs`) while Raft
 * says it cannot take one yet; any other refusal is returned at once for the caller to report.
 */
export async function openSnapshot(
  conn: BaoConnection,
  token: string,
  opts: { signal?: AbortSignal; withinMs?: number; onWaiting?: (why: string) => void } = {},
): Promise<IncomingMessage | BaoError> {
  const withinMs = opts.withinMs ?? SNAPSHOT_READY_WAIT_MS;
  const patience = new Patience({
    withinMs,
    firstMs: 500,
    maxMs: 5000,
    signal: opts.signal,
    onWaiting: opts.onWaiting,
  });
  for (;;) {
    const res = await send(conn, "GET", "sys/storage/raft/snapshot", { token, signal: opts.signal });
    if (res.statusCode === 200) return res;
    const refused = await failure(res, "snapshot");
    if (!RAFT_NOT_READY.test(refused.message) || !(await patience.again(refused.message))) return refused;
  }
}

/** Reads a small response (an error or a login answer), refusing anything larger than 1 MiB. */
export async function readSmall(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new BaoError(res.statusCode, "response larger than 1 MiB");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** OpenBao's `errors` array from a failed call, joined; the raw status line when there is none. */
export async function failure(res: IncomingMessage, what: string): Promise<BaoError> {
  let detail = `HTTP ${res.statusCode}`;
  try {
    const body = JSON.parse(await readSmall(res)) as { errors?: unknown };
    if (Array.isArray(body.errors) && body.errors.length > 0) detail += `: ${body.errors.join("; ")}`;
  } catch {
    // Not JSON: the status says enough, and an HTML proxy page could be long.
  }
  return new BaoError(res.statusCode, `${what}: ${detail}`);
}

/** A client token: read from the mounted file, or from a JWT login with the projected ServiceAccount token. */
export async function login(
  conn: BaoConnection,
  auth: ExecutorAuth,
  files: { tokenFile?: string; jwtFile?: string },
): Promise<string> {
  if (auth.method === "token") {
    if (!files.tokenFile) throw new BaoError(undefined, "token auth: no token file mounted");
    const token = (await readFile(files.tokenFile, "utf8")).trim();
    if (token === "") throw new BaoError(undefined, "token auth: the token file is empty");
    return token;
  }
  if (!files.jwtFile) throw new BaoError(undefined, "jwt auth: no ServiceAccount token file mounted");
  const jwt = (await readFile(files.jwtFile, "utf8")).trim();
  // Upstream's mount first; a refusal there (no such mount or role: 400/403/404) tries the next.
  const tried: string[] = [];
  let res: IncomingMessage | undefined;
  let lastStatus: number | undefined;
  for (const mount of jwtMounts(auth.mountPath)) {
    const r = await send(conn, "POST", `auth/${mount}/login`, {
      body: JSON.stringify({ role: auth.role, jwt }),
    });
    if (r.statusCode === 200) {
      res = r;
      break;
    }
    tried.push((await failure(r, `at auth/${mount}`)).message);
    lastStatus = r.statusCode;
    // A server error is the answer, not a sign of the wrong mount.
    if (![400, 403, 404].includes(r.statusCode ?? 0)) break;
  }
  if (!res) throw new BaoError(lastStatus, `jwt login with role "${auth.role}" ${tried.join("; ")}`);
  let body: { auth?: { client_token?: string } };
  try {
    body = JSON.parse(await readSmall(res)) as typeof body;
  } catch {
    // JSON.parse's message quotes the text near the fault, and this text carries the client token.
    throw new BaoError(200, `jwt login with role "${auth.role}": the answer is not valid JSON`);
  }
  const token = body?.auth?.client_token;
  if (!token) throw new BaoError(200, `jwt login with role "${auth.role}": the answer has no client token`);
  return token;
}
