import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { BaoWriteRecorder } from "../faults/bao-recorder.js";
import { inPhase, writeKind } from "../faults/campaign.js";
import { initializedOnce, REFUSALS_ALLOWED, refusedRepeatedly } from "../faults/openbao.js";
import { type RecordedWrite, WriteLog } from "../faults/write-proxy.js";
import { spawnPreloaded } from "../support/preloaded-script.js";

// The OpenBao half of the campaign's write order: the preload inside the operator's process reports
// each OpenBao write to the harness's recorder and holds the answer until the recorder says go; a
// kill armed on that write lands before the process reads the answer.

/** A stand-in OpenBao: sys/init answers a token, anything else {}. */
let bao: http.Server;
let baoPort = 0;
before(async () => {
  bao = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(req.url?.startsWith("/v1/sys/init") ? '{"root_token":"s.stand-in"}' : "{}");
    });
  });
  await new Promise<void>((r) => bao.listen(0, "127.0.0.1", r));
  baoPort = (bao.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => bao.close(() => r())));

/** A process standing for the operator: a health read, a login, sys/init, printing what it read. */
const OPERATOR = `
const https = require("node:http");
const send = (method, path) => new Promise((resolve) => {
  const req = https.request({ host: "127.0.0.1", port: Number(process.env.BAO_PORT), method, path }, (res) => {
    let b = ""; res.on("data", (c) => (b += c)); res.on("end", () => resolve(b));
  });
  req.end();
});
(async () => {
  await send("GET", "/v1/sys/health");
  await send("POST", "/v1/auth/jwt/login");
  const init = await send("PUT", "/v1/sys/init?x=1");
  console.log(init.includes("root_token") ? "read the init answer" : "no token");
})();
`;

/** The stand-in operator with the preload, reporting to `recorder`; what it printed and how it ended. */
function startOperator(recorder: BaoWriteRecorder) {
  const child = spawnPreloaded(OPERATOR, recorder, baoPort);
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const ended = new Promise<{ out: string; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (_code, signal) => r({ out, signal })),
  );
  return { child, ended };
}

describe("fault campaign: OpenBao writes from inside the operator's process", () => {
  it("records OpenBao writes (not reads, not logins) by method, path without query, and status", async () => {
    const log = new WriteLog();
    const recorder = await BaoWriteRecorder.start(log);
    try {
      const { out, signal } = await startOperator(recorder).ended;
      assert.equal(signal, null);
      assert.equal(out.trim(), "read the init answer");
      assert.deepEqual(
        log.writes.map((w) => `${w.backend} ${w.method} ${w.path} ${w.status}`),
        ["bao PUT /v1/sys/init 200"],
      );
    } finally {
      await recorder.close();
    }
  });

  it("a kill armed on sys/init lands before the process reads its answer", async () => {
    const log = new WriteLog();
    const recorder = await BaoWriteRecorder.start(log);
    try {
      const op = startOperator(recorder);
      let killedFor = "";
      // As the campaign does: the kill runs inside the recorder's record(), before it answers.
      log.arm(
        (w) => w.backend === "bao" && w.path === "/v1/sys/init",
        (w) => {
          killedFor = `${w.method} ${w.path}`;
          op.child.kill("SIGKILL");
        },
      );
      const { out, signal } = await op.ended;
      assert.equal(killedFor, "PUT /v1/sys/init");
      assert.equal(signal, "SIGKILL");
      assert.equal(out, "", "the killed process never read the init answer");
    } finally {
      await recorder.close();
    }
  });
});

describe("fault campaign: crash points among one backend's writes", () => {
  const w = (seq: number, backend: string): RecordedWrite => ({
    seq,
    backend,
    method: "PUT",
    path: `/${seq}`,
    status: 200,
  });
  it("the Nth write to the backend within the phase, whatever the other backend wrote", () => {
    const phases = [{ name: "create", firstWrite: 1 }];
    const at = inPhase({ phase: "create", index: 2, backend: "bao", phases });
    const fired = [w(1, "kube"), w(2, "bao"), w(3, "kube"), w(4, "kube"), w(5, "bao"), w(6, "bao")].filter(
      at,
    );
    assert.deepEqual(
      fired.map((x) => x.seq),
      [5],
    );
  });
  it("no phase: the Nth write to the backend in the run; no backend: the Nth write of the phase", () => {
    const phases = [
      { name: "create", firstWrite: 1 },
      { name: "canary", firstWrite: 3 },
    ];
    const run = inPhase({ index: 1, backend: "bao", phases });
    assert.deepEqual(
      [w(1, "kube"), w(2, "bao")].filter(run).map((x) => x.seq),
      [2],
    );
    const canary = inPhase({ phase: "canary", index: 2, phases });
    assert.deepEqual(
      [w(3, "kube"), w(4, "bao"), w(5, "kube")].filter(canary).map((x) => x.seq),
      [4],
    );
  });
  it("a kind of write: the first of that method and path in the phase, whatever its number, the namespace aside", () => {
    const phases = [{ name: "bluegreen", firstWrite: 1 }];
    const x = (seq: number, method: string, path: string): RecordedWrite => ({
      seq,
      backend: "bao",
      method,
      path,
      status: 204,
    });
    const stepDown = writeKind(x(0, "PUT", "/v1/sys/step-down"));
    // More promotes before it than in the run without faults: still the step-down is the one.
    const writes = [
      x(1, "POST", "/v1/sys/storage/raft/promote"),
      x(2, "POST", "/v1/sys/storage/raft/promote"),
      x(3, "PUT", "/v1/sys/step-down"),
      x(4, "PUT", "/v1/sys/step-down"),
    ];
    assert.deepEqual(
      writes.filter(inPhase({ phase: "bluegreen", index: 1, kind: stepDown, phases })).map((w) => w.seq),
      [3],
    );
    assert.equal(
      writeKind({
        seq: 1,
        backend: "kube",
        method: "PATCH",
        path: "/api/v1/namespaces/faults-a1/pods/p",
        status: 200,
      }),
      writeKind({
        seq: 9,
        backend: "kube",
        method: "PATCH",
        path: "/api/v1/namespaces/faults-b2/pods/p",
        status: 200,
      }),
    );
  });
});

describe("fault campaign: initialized once, as OpenBao saw it", () => {
  const init = (seq: number, status: number): RecordedWrite => ({
    seq,
    backend: "bao",
    method: "PUT",
    path: "/v1/sys/init",
    status,
  });
  it("one sys/init answered 200 is clean; none, two, or a refused second one are violations", () => {
    assert.deepEqual(initializedOnce([init(1, 200)]), []);
    assert.match(initializedOnce([]).join(), /answered 200 0 times/);
    assert.match(initializedOnce([init(1, 200), init(2, 200)]).join(), /answered 200 2 times/);
    assert.match(initializedOnce([init(1, 200), init(2, 400)]).join(), /sent 2 times \(1 answered 200\)/);
  });
});

describe("fault campaign: OpenBao writes refused again and again", () => {
  const w = (seq: number, path: string, status: number): RecordedWrite => ({
    seq,
    backend: "bao",
    method: "POST",
    path,
    status,
  });
  const AP = "/v1/sys/storage/raft/autopilot/configuration";

  it("a refusal or two is a retry; more of the same write is a violation naming it and its codes", () => {
    const twice = Array.from({ length: REFUSALS_ALLOWED }, (_, i) => w(i + 1, AP, 400));
    assert.deepEqual(refusedRepeatedly([...twice, w(9, AP, 204)]), []);
    const loop = Array.from({ length: 8 }, (_, i) => w(i + 1, AP, 400));
    assert.deepEqual(refusedRepeatedly(loop), [`OpenBao refused POST ${AP} 8 times (400)`]);
  });

  it("answers that are not refusals, and API server writes, do not count", () => {
    const ok = Array.from({ length: 5 }, (_, i) => w(i + 1, AP, 204));
    const failed = Array.from({ length: 5 }, (_, i) => w(i + 1, AP, 503));
    const kube = Array.from({ length: 5 }, (_, i) => ({ ...w(i + 1, AP, 409), backend: "kube" }));
    assert.deepEqual(refusedRepeatedly([...ok, ...failed, ...kube]), []);
  });
});
