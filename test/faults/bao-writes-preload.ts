/**
 * Loaded into the operator under faults (`node --import`) when the campaign records OpenBao writes
 * (`--bao-writes`). The operator reaches OpenBao pods by their cluster names over TLS it verifies,
 * so no proxy can sit between them without a certificate the operator would refuse; this sits in
 * the operator's own process instead, at the one place every OpenBao request leaves it (node's
 * http/https request, which the runtime's JsonHttp calls).
 *
 * Each mutating request to OpenBao's API port is held at its answer: the method, path and status
 * are posted to the harness's recorder (FAULTS_BAO_RECORDER), and only once the recorder answers
 * does the operator's code see the response. When the recorder's write is the armed crash point,
 * the harness SIGKILLs this process instead of answering: OpenBao has done the write, the operator
 * never learns its answer (for sys/init: the root token is never read).
 *
 * Only request lines and status codes go to the recorder: never a body (sys/init answers with the
 * root token), never a header (the token).
 */
import { createRequire } from "node:module";

type Http = typeof import("node:http");
type ClientRequest = import("node:http").ClientRequest;
type IncomingMessage = import("node:http").IncomingMessage;

const require = createRequire(import.meta.url);
const http: Http = require("node:http");
const https: typeof import("node:https") = require("node:https");

const recorder = process.env["FAULTS_BAO_RECORDER"];
/**
 * OpenBao's API port (the operator's identity.ts API_PORT); the harness's own proxies use others.
 * FAULTS_BAO_PORT: the unit test's stand-in server, on a port of its own.
 */
const BAO_PORT = process.env["FAULTS_BAO_PORT"] ?? "8200";
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const original = { http: http.request, https: https.request };

/** Tells the recorder one write; resolves when it answers (never, when the answer is a kill). */
function report(method: string, path: string, status: number): Promise<void> {
  const body = JSON.stringify({ method, path, status });
  return new Promise<void>((resolve) => {
    const req = original.http.call(
      http,
      `${recorder}/write`,
      { method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve());
        res.on("error", () => resolve());
      },
    );
    // A recorder gone (the harness's run ending) must not hang the operator.
    req.on("error", () => resolve());
    req.end(body);
  });
}

function portOf(args: unknown[]): string {
  const first = args[0];
  if (first instanceof URL) return first.port;
  if (typeof first === "string") return new URL(first).port;
  const o = first as { port?: number | string } | undefined;
  return String(o?.port ?? "");
}

function wrap(send: Http["request"]): Http["request"] {
  return function (this: unknown, ...args: unknown[]): ClientRequest {
    const req = (send as (...a: unknown[]) => ClientRequest).apply(this, args);
    if (portOf(args) !== BAO_PORT || !MUTATING.has(req.method)) return req;
    const path = req.path.split("?")[0] ?? req.path;
    const emit = req.emit;
    req.emit = function (this: ClientRequest, event: string | symbol, ...rest: unknown[]): boolean {
      if (event !== "response") return emit.call(this, event, ...rest);
      const res = rest[0] as IncomingMessage;
      void report(req.method, path, res.statusCode ?? 0).then(() => emit.call(this, event, ...rest));
      return true;
    } as ClientRequest["emit"];
    return req;
  } as Http["request"];
}

if (recorder) {
  http.request = wrap(original.http);
  https.request = wrap(original.https as unknown as Http["request"]) as unknown as typeof https.request;
}
