import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { after, before, describe, it } from "node:test";
import type { TLSSocket } from "node:tls";
import { JsonHttp, JsonHttpError, sharedSecureContext } from "../../src/runtime/jsonhttp.js";
import { type ControlPlanePki, createControlPlanePki } from "../../src/testenv/pki.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A real server on loopback: the peer the transport talks to, answering as `handler` says. */
async function serve(handler: Handler, make: () => Server = () => createServer()) {
  const server = make();
  let connections = 0;
  server.on("connection", () => connections++);
  server.on("secureConnection", () => connections++);
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handler(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    connections: () => connections,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Rejects with a JsonHttpError of this failure whose message matches `pattern`; returns it. */
async function failsWith(p: Promise<unknown>, failure: string, pattern: RegExp): Promise<JsonHttpError> {
  const e = await p.then(
    () => assert.fail("the request succeeded"),
    (err: unknown) => err,
  );
  assert.ok(e instanceof JsonHttpError, `not a JsonHttpError: ${String(e)}`);
  assert.equal(e.failure, failure, e.message);
  assert.match(e.message, pattern);
  return e;
}

const SECRET = "s3cr3t-value-never-shown";

describe("JsonHttp over plain HTTP", () => {
  it("sends JSON with the caller's headers and parses the answer, keeping its headers", async () => {
    const seen: { method?: string; url?: string; token?: string; type?: string; body?: string } = {};
    const s = await serve((req, res, body) => {
      Object.assign(seen, {
        method: req.method,
        url: req.url,
        token: req.headers["x-vault-token"],
        type: req.headers["content-type"],
        body,
      });
      res.writeHead(201, { "content-type": "application/json", date: "Tue, 01 Dec 2026 10:00:00 GMT" });
      res.end(JSON.stringify({ ok: true, n: 2 }));
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}` });
    try {
      const r = await http.request({
        method: "POST",
        path: "/v1/sys/x?a=1",
        headers: { "x-vault-token": "t" },
        body: { role: "r" },
      });
      assert.deepEqual(
        { status: r.status, body: r.body, date: r.headers.date },
        { status: 201, body: { ok: true, n: 2 }, date: "Tue, 01 Dec 2026 10:00:00 GMT" },
      );
      assert.deepEqual(seen, {
        method: "POST",
        url: "/v1/sys/x?a=1",
        token: "t",
        type: "application/json",
        body: '{"role":"r"}',
      });
    } finally {
      s.close();
    }
  });

  it("sends every path to its own server, one that names another too", async () => {
    const seen: string[] = [];
    const s = await serve((req, res) => {
      seen.push(req.url ?? "");
      res.end("{}");
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}` });
    try {
      await http.request({ method: "GET", path: "//127.0.0.1:1/v1/x" });
      await http.request({ method: "GET", path: "/v1/a/../b" });
      assert.deepEqual(seen, ["/v1/x", "/v1/b"]);
    } finally {
      s.close();
    }
  });

  it("answers a body that is empty or not JSON as undefined, with its status", async () => {
    const s = await serve((req, res) => {
      res.writeHead(req.url === "/empty" ? 204 : 502);
      res.end(req.url === "/empty" ? "" : `<html>${SECRET}</html>`);
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}` });
    try {
      assert.deepEqual(
        await http.request({ method: "GET", path: "/empty" }).then((r) => [r.status, r.body]),
        [204, undefined],
      );
      assert.deepEqual(await http.request({ method: "GET", path: "/html" }).then((r) => [r.status, r.body]), [
        502,
        undefined,
      ]);
    } finally {
      s.close();
    }
  });

  it("fails a connection that goes silent before or during the answer", { timeout: 60_000 }, async () => {
    const s = await serve((req, res) => {
      if (req.url === "/half") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(`{"token":"${SECRET}`);
      }
      // Otherwise never answers: a half-dead network path.
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}`, idleTimeoutMs: 300 });
    try {
      await failsWith(http.request({ method: "GET", path: "/silent" }), "timeout", /silent for 300 ms/);
      const e = await failsWith(
        http.request({ method: "GET", path: "/half" }),
        "timeout",
        /silent for 300 ms/,
      );
      assert.doesNotMatch(e.message, new RegExp(SECRET), "the part of the answer read is withheld");
    } finally {
      s.close();
    }
  });

  it("fails an exchange past its total limit even while bytes keep coming", { timeout: 60_000 }, async () => {
    const timers: NodeJS.Timeout[] = [];
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("[");
      // A byte every 50 ms never lets the connection go silent for the 10 s idle limit.
      timers.push(setInterval(() => res.write(" "), 50));
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}`, idleTimeoutMs: 10_000 });
    try {
      await failsWith(
        http.request({ method: "GET", path: "/trickle", deadlineMs: 500 }),
        "timeout",
        /no answer within 500 ms/,
      );
    } finally {
      for (const t of timers) clearInterval(t);
      s.close();
    }
  });

  it("names host, method and path, never the query, request body, token or answer", async () => {
    const s = await serve(() => {});
    s.close();
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}` });
    const e = await failsWith(
      http.request({
        method: "PUT",
        path: `/v1/sys/init?secret=${SECRET}`,
        headers: { "x-vault-token": SECRET },
        body: { jwt: SECRET },
      }),
      "connection",
      new RegExp(`^127\\.0\\.0\\.1:${s.port}: PUT /v1/sys/init: ECONNREFUSED$`),
    );
    assert.equal(e.code, "ECONNREFUSED");
  });

  it("refuses an answer bigger than the limit without keeping it", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ data: SECRET.repeat(200) }));
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}`, maxBodyBytes: 1024 });
    try {
      const e = await failsWith(
        http.request({ method: "GET", path: "/big" }),
        "too-large",
        /more than 1024 bytes/,
      );
      assert.doesNotMatch(e.message, new RegExp(SECRET));
    } finally {
      s.close();
    }
  });

  it("ends with the caller's abort reason, before the answer, during it, or at once", async () => {
    let started!: () => void;
    const s = await serve((req, res) => {
      if (req.url === "/half") {
        res.writeHead(200);
        res.write("{", () => started());
      } else started();
    });
    const http = new JsonHttp({ address: `http://127.0.0.1:${s.port}` });
    try {
      for (const path of ["/wait", "/half"]) {
        const abort = new AbortController();
        const reached = new Promise<void>((r) => {
          started = r;
        });
        const pending = http.request({ method: "GET", path, signal: abort.signal });
        await reached;
        const reason = new Error(`stop ${path}`);
        abort.abort(reason);
        await assert.rejects(pending, (e) => e === reason);
      }
      const reason = new Error("already stopped");
      await assert.rejects(
        http.request({ method: "GET", path: "/wait", signal: AbortSignal.abort(reason) }),
        (e) => e === reason,
      );
    } finally {
      s.close();
    }
  });

  it("keeps connections with maxSockets and opens one per exchange without", async () => {
    const s = await serve((_req, res) => res.end("{}"));
    const pooled = new JsonHttp({ address: `http://127.0.0.1:${s.port}`, maxSockets: 4 });
    const fresh = new JsonHttp({ address: `http://127.0.0.1:${s.port}` });
    try {
      for (let i = 0; i < 3; i++) await pooled.request({ method: "GET", path: "/" });
      assert.equal(s.connections(), 1);
      for (let i = 0; i < 3; i++) await fresh.request({ method: "GET", path: "/" });
      assert.equal(s.connections(), 4);
    } finally {
      pooled.close();
      s.close();
    }
  });
});

describe("JsonHttp over TLS", () => {
  let pki: ControlPlanePki;
  before(async () => {
    pki = await createControlPlanePki(makeTempDir("jsonhttp-pki"));
  });

  const tlsServer = (clientCa?: string) => () =>
    createHttpsServer({
      cert: readPem(pki.servingCert),
      key: readPem(pki.servingKey),
      ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: true } : {}),
    });
  const whoAmI: Handler = (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    res.end(JSON.stringify({ cn: peer?.subject?.CN ?? null }));
  };

  let s: Awaited<ReturnType<typeof serve>>;
  let mtls: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    s = await serve(whoAmI, tlsServer());
    mtls = await serve(whoAmI, tlsServer(pki.caPem));
  });
  after(() => {
    s?.close();
    mtls?.close();
  });

  it("fails fast a connection never set up, though the answer is allowed minutes", {
    timeout: 60_000,
  }, async () => {
    // Accepts TCP and says nothing: the TLS handshake never ends, as behind a network dropping
    // packets. The exchange allows 30 s of silence (OpenBao's sys/init allows 5 minutes).
    const silent = createNetServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    const http = new JsonHttp({
      address: `https://127.0.0.1:${port}`,
      caPem: pki.caPem,
      connectTimeoutMs: 300,
    });
    const started = performance.now();
    try {
      const e = await failsWith(
        http.request({ method: "PUT", path: "/v1/sys/init", idleTimeoutMs: 30_000 }),
        "connection",
        /PUT \/v1\/sys\/init: could not connect within 300 ms \(nothing was sent\)/,
      );
      assert.equal(e.code, "ETIMEDOUT");
      assert.ok(performance.now() - started < 20_000, "failed by the connect limit, not the idle one");
    } finally {
      silent.close();
    }
  });

  it("trusts a server whose certificate chains to the given CA", async () => {
    const http = new JsonHttp({ address: `https://127.0.0.1:${s.port}`, caPem: pki.caPem });
    assert.deepEqual((await http.request({ method: "GET", path: "/" })).body, { cn: null });
  });

  it("refuses a server the CA did not sign (the system store does not know the test CA)", async () => {
    const http = new JsonHttp({ address: `https://127.0.0.1:${s.port}` });
    const e = await failsWith(http.request({ method: "GET", path: "/" }), "connection", /: GET \/: [A-Z_]+$/);
    assert.match(e.code ?? "", /CERT|SIGNATURE|ISSUER/);
  });

  it("checks the certificate against serverName when given", async () => {
    const ok = new JsonHttp({
      address: `https://127.0.0.1:${s.port}`,
      caPem: pki.caPem,
      serverName: "localhost",
    });
    assert.equal((await ok.request({ method: "GET", path: "/" })).status, 200);
    const wrong = new JsonHttp({
      address: `https://127.0.0.1:${s.port}`,
      caPem: pki.caPem,
      serverName: "bao-0.elsewhere.svc",
    });
    const e = await failsWith(wrong.request({ method: "GET", path: "/" }), "connection", /ALTNAME/);
    assert.equal(e.code, "ERR_TLS_CERT_ALTNAME_INVALID");
  });

  it("presents the client certificate to a server that asks for one", async () => {
    const withCert = new JsonHttp({
      address: `https://127.0.0.1:${mtls.port}`,
      caPem: pki.caPem,
      clientCert: { certPem: pki.adminCertPem, keyPem: pki.adminKeyPem },
      maxSockets: 2,
    });
    try {
      assert.deepEqual((await withCert.request({ method: "GET", path: "/" })).body, { cn: "testenv-admin" });
    } finally {
      withCert.close();
    }
    const without = new JsonHttp({ address: `https://127.0.0.1:${mtls.port}`, caPem: pki.caPem });
    await failsWith(without.request({ method: "GET", path: "/" }), "connection", /: GET \/: /);
  });

  it("builds one TLS context per CA bundle and client certificate, shared by clients", async () => {
    const ca = pki.caPem;
    const first = sharedSecureContext({ ca });
    // The same material in another string (as read again from a Secret) finds the same context.
    assert.equal(sharedSecureContext({ ca: `${ca}` }), first);
    const withCert = sharedSecureContext({ ca, cert: pki.adminCertPem, key: pki.adminKeyPem });
    assert.notEqual(withCert, first);
    assert.equal(sharedSecureContext({ ca, cert: pki.adminCertPem, key: pki.adminKeyPem }), withCert);
    assert.notEqual(sharedSecureContext({}), first);
    // Bad PEM text fails the exchange, as when node built the context for each connection.
    const bad = new JsonHttp({ address: `https://127.0.0.1:${s.port}`, caPem: "not a certificate" });
    await assert.rejects(bad.request({ method: "GET", path: "/" }));
    // Clients of one CA, one after the other, each still verified against it.
    for (let i = 0; i < 3; i++) {
      const http = new JsonHttp({ address: `https://127.0.0.1:${s.port}`, caPem: ca });
      assert.equal((await http.request({ method: "GET", path: "/" })).status, 200);
    }
  });
});

function readPem(path: string): string {
  return readFileSync(path, "utf8");
}
