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

export interface BaoConnection {
  address: string;
  ca?: string;
}

/** An OpenBao call failed; the message has OpenBao's own error strings, never the token. */
export class BaoError extends Error {
  constructor(
    readonly status: number | undefined,
    message: string,
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
    req.once("error", (err) => reject(new BaoError(undefined, `${method} /v1/${path}: ${err.message}`)));
    if (opts.body === undefined) req.end();
    else if (typeof opts.body === "string") req.end(opts.body);
    else pipeline(opts.body, req).catch((err) => req.destroy(err));
  });
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
