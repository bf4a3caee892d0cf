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
 *
 * The same place black-holes OpenBao on the harness's command (an outage of backend "bao-net"):
 * the recorder's GET /hold says off, armed (from the first request whose path matches) or on.
 * While on, every request to OpenBao's port gets a fresh connection whose name lookup is held
 * (nothing is sent, the connection's own timeout runs as for packets dropped), and answers of
 * requests already sent are held too; once off, both go on as a healed network lets them. The
 * operator names pods by DNS names, so every connection does look its address up.
 */
import { createRequire } from "node:module";

type Http = typeof import("node:http");
type ClientRequest = import("node:http").ClientRequest;
type IncomingMessage = import("node:http").IncomingMessage;

const require = createRequire(import.meta.url);
const http: Http = require("node:http");
const https: typeof import("node:https") = require("node:https");
const dns: typeof import("node:dns") = require("node:dns");

const recorder = process.env["FAULTS_BAO_RECORDER"];
/**
 * OpenBao's API port (the operator's identity.ts API_PORT); the harness's own proxies use others.
 * FAULTS_BAO_PORT: the unit test's stand-in server, on a port of its own.
 */
const BAO_PORT = process.env["FAULTS_BAO_PORT"] ?? "8200";
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const original = { http: http.request, https: https.request };

/** The black hole as this process sees it; `from` while armed. */
let hold: { mode: "off" | "on" } | { mode: "armed"; from: RegExp } = { mode: "off" };
let release: Promise<void> = Promise.resolve();
let open: () => void = () => {};

function setHold(next: typeof hold): void {
  const was = hold.mode;
  hold = next;
  if (was !== "on" && next.mode === "on") release = new Promise<void>((r) => (open = r));
  if (was === "on" && next.mode !== "on") open();
}

/** Asks the recorder for the harness's command every 200 ms, for as long as the process lives. */
function watchHold(): void {
  const req = original.http.call(http, `${recorder}/hold`, { method: "GET" }, (res) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => {
      try {
        const s = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { mode?: string; from?: string };
        // Begun here at a matching request: on until the harness says off, whatever it says meanwhile.
        if (s.mode === "off") setHold({ mode: "off" });
        else if (s.mode === "on") setHold({ mode: "on" });
        else if (s.mode === "armed" && hold.mode === "off" && s.from)
          setHold({ mode: "armed", from: new RegExp(s.from) });
      } catch {
        // A recorder that answered nothing useful: asked again.
      }
      setTimeout(watchHold, 200).unref();
    });
  });
  req.on("error", () => setTimeout(watchHold, 200).unref());
  req.end();
}

/** Tells the recorder the hold began here, at the request it was armed for. */
function tellHeld(path: string): void {
  const req = original.http.call(http, `${recorder}/held`, { method: "POST" }, (res) => res.resume());
  req.on("error", () => {});
  req.end(JSON.stringify({ path }));
}

type Lookup = (host: string, opts: object, cb: (...a: unknown[]) => void) => void;
/** A name lookup that answers only once the hole is healed: the connection never leaves meanwhile. */
const heldLookup: Lookup = (host, opts, cb) => {
  void release.then(() => dns.lookup(host, opts as import("node:dns").LookupAllOptions, cb as never));
};

/** The request's options, when given as an object, on a fresh connection that waits for the heal. */
function throughHole(args: unknown[]): unknown[] {
  const first = args[0];
  if (typeof first !== "object" || first === null || first instanceof URL) return args;
  return [{ ...(first as object), agent: false, lookup: heldLookup }, ...args.slice(1)];
}

function pathOf(args: unknown[]): string {
  const first = args[0];
  if (first instanceof URL) return first.pathname;
  if (typeof first === "string") return new URL(first).pathname;
  return String((first as { path?: string } | undefined)?.path ?? "").split("?")[0] ?? "";
}

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
    const toBao = portOf(args) === BAO_PORT;
    if (toBao && hold.mode === "armed" && hold.from.test(pathOf(args))) {
      setHold({ mode: "on" });
      tellHeld(pathOf(args));
    }
    const held = toBao && hold.mode === "on";
    const req = (send as (...a: unknown[]) => ClientRequest).apply(this, held ? throughHole(args) : args);
    if (!toBao) return req;
    const mutating = MUTATING.has(req.method);
    const path = req.path.split("?")[0] ?? req.path;
    const emit = req.emit;
    req.emit = function (this: ClientRequest, event: string | symbol, ...rest: unknown[]): boolean {
      if (event !== "response") return emit.call(this, event, ...rest);
      const res = rest[0] as IncomingMessage;
      const answer = () =>
        mutating
          ? void report(req.method, path, res.statusCode ?? 0).then(() => emit.call(this, event, ...rest))
          : void emit.call(this, event, ...rest);
      // An answer on its way when the hole opened is lost in it until the heal.
      if (hold.mode === "on") void release.then(answer);
      else answer();
      return true;
    } as ClientRequest["emit"];
    return req;
  } as Http["request"];
}

if (recorder) {
  watchHold();
  http.request = wrap(original.http);
  https.request = wrap(original.https as unknown as Http["request"]) as unknown as typeof https.request;
}
