import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { outageChosen, parseFaultArgs } from "../faults/args.js";
import { BaoWriteRecorder } from "../faults/bao-recorder.js";
import { BAO_NET, cutOf, describeMoment } from "../faults/campaign.js";
import { momentOf, shows } from "../faults/lifecycle.js";
import { WriteLog } from "../faults/write-proxy.js";
import { spawnPreloaded } from "../support/preloaded-script.js";

// The pieces of the campaign's outages that run without a node: the flags choosing them, their
// moments, the conditions that count as the fault showing, and the OpenBao black hole held inside
// the operator's process (a real child process with the preload, a stand-in OpenBao).

describe("fault campaign: choosing outages", () => {
  it("--outage TEXT implies --outages, repeats, and picks by backend or words of the label", () => {
    const a = parseFaultArgs(["--outage", "bao-net", "--outage", "Backup"], 0);
    assert.equal(a.outages, true);
    assert.deepEqual(a.outageFilter, ["bao-net", "backup"]);
    assert.equal(outageChosen(a.outageFilter, { backend: "bao-net", label: "x" }), true);
    assert.equal(
      outageChosen(a.outageFilter, { backend: "s3", label: "object store stopped during a backup" }),
      true,
    );
    assert.equal(outageChosen(a.outageFilter, { backend: "kube", label: "API server mid upgrade" }), false);
    assert.equal(outageChosen([], { backend: "kube" }), true);
  });

  it("--outage without a value is refused by name", () => {
    assert.throws(() => parseFaultArgs(["--outage"], 0), /--outage: give a backend/);
  });
});

describe("fault campaign: an outage's moment and what must show", () => {
  it("`at` alone is a share of the writes; `when` wins", () => {
    assert.deepEqual(momentOf({ backend: "kube", at: 0.1, seconds: 30 }), { share: 0.1 });
    assert.deepEqual(momentOf({ backend: "kube", seconds: 30, when: { phase: "upgrade", index: 2 } }), {
      phase: "upgrade",
      index: 2,
    });
    assert.equal(describeMoment({ phase: "upgrade" }), "at write 1 of phase upgrade");
    assert.equal(
      describeMoment({ request: /^\/v1\/sys\/init$/ }),
      "at the first request to ^\\/v1\\/sys\\/init$",
    );
  });

  it("a condition shows by Type=Status/Reason, or Type=Status for any reason; a bad form is refused", () => {
    const sealed = { type: "OpenBaoSealed", status: "True", reason: "Sealed" };
    assert.equal(shows(["OpenBaoSealed=True/Sealed"], sealed), "OpenBaoSealed=True/Sealed");
    assert.equal(shows(["OpenBaoSealed=True"], sealed), "OpenBaoSealed=True");
    assert.equal(shows(["OpenBaoSealed=False", "OpenBaoSealed=True/Other"], sealed), undefined);
    assert.throws(() => shows(["OpenBaoSealed"], sealed), /Type=Status or Type=Status\/Reason/);
    const waiting = {
      type: "Upgrading",
      status: "True",
      reason: "InProgress",
      message: "green pod g-0 sealed: …",
    };
    assert.equal(
      shows(["Upgrading=True/InProgress ~ sealed"], waiting),
      "Upgrading=True/InProgress ~ sealed",
    );
    assert.equal(shows(["Upgrading=True ~ g-0 sealed"], waiting), "Upgrading=True ~ g-0 sealed");
    assert.equal(shows(["Upgrading=True/InProgress ~ catching up"], waiting), undefined);
  });

  it("the backend's cut: the API server when the campaign owns it, a lifecycle's own, the black hole", async () => {
    const calls: string[] = [];
    const api = { stop: async () => void calls.push("stop"), start: async () => void calls.push("start") };
    const kube = cutOf("kube", new Map(), undefined, undefined, api);
    await kube?.down();
    await kube?.up();
    assert.deepEqual(calls, ["stop", "start"]);
    const s3 = { down: async () => {}, up: async () => {} };
    assert.equal(cutOf("s3", new Map(), { s3 }, undefined), s3);
    assert.equal(cutOf(BAO_NET, new Map(), undefined, undefined), undefined, "no preload, no black hole");
    assert.equal(cutOf("nothing", new Map(), { s3 }, undefined), undefined);
  });
});

/** A stand-in OpenBao on localhost (so the operator looks its name up): logs each request's path. */
let bao: http.Server;
let baoPort = 0;
const received: string[] = [];
before(async () => {
  bao = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(req.url === "/v1/sys/init" ? '{"root_token":"s.stand-in"}' : "{}");
    });
  });
  await new Promise<void>((r) => bao.listen(0, "localhost", r));
  baoPort = (bao.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => bao.close(() => r())));

/**
 * The operator's stand-in: on "go", a health read, then sys/init (5 minutes allowed, as the
 * operator's own) and at once a leader read allowed 300 ms, printing what each got.
 */
const OPERATOR = `
const http = require("node:http");
const send = (method, path, timeout) => new Promise((resolve) => {
  const req = http.request({ host: "localhost", port: Number(process.env.BAO_PORT), method, path, timeout }, (res) => {
    let b = ""; res.on("data", (c) => (b += c)); res.on("end", () => resolve(b));
  });
  req.on("timeout", () => { req.destroy(); resolve("timed out"); });
  req.on("error", (e) => resolve("error " + e.code));
  req.end();
});
process.stdin.once("data", async () => {
  await send("GET", "/v1/sys/health", 5000);
  const init = send("PUT", "/v1/sys/init", 300000);
  console.log("leader " + (await send("GET", "/v1/sys/leader", 300)));
  console.log((await init).includes("root_token") ? "read the init answer" : "no token");
  process.exit(0);
});
`;

describe("fault campaign: OpenBao black-holed inside the operator's process", () => {
  it("armed at sys/init: nothing reaches OpenBao while it lasts, reads time out, init goes through after", async () => {
    received.length = 0;
    const recorder = await BaoWriteRecorder.start(new WriteLog(), "127.0.0.1", false);
    const child = spawnPreloaded(OPERATOR, recorder, baoPort, "pipe");
    let out = "";
    const lines: (() => void)[] = [];
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      for (const l of lines.splice(0)) l();
    });
    const printed = (text: string) =>
      new Promise<void>((resolve) => {
        const look = () => (out.includes(text) ? resolve() : lines.push(look));
        look();
      });
    const ended = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    try {
      const cut = recorder.cut();
      const begun = cut.down(/^\/v1\/sys\/init$/);
      // The process takes the command on its own poll: go once it has.
      const deadline = Date.now() + 20_000;
      while (recorder.lastServed !== "armed") {
        assert.ok(Date.now() < deadline, "the preload never asked for the command");
        await new Promise((r) => setTimeout(r, 20));
      }
      child.stdin!.write("go\n");
      await begun;
      await printed("leader ");
      assert.match(out, /leader timed out/);
      assert.deepEqual(received, ["GET /v1/sys/health"], "nothing after the hole opened reached OpenBao");
      await cut.up();
      assert.equal(await ended, 0);
      assert.match(out, /read the init answer/);
      assert.deepEqual(received, ["GET /v1/sys/health", "PUT /v1/sys/init"], "the timed-out read never left");
    } finally {
      child.kill("SIGKILL");
      await recorder.close();
    }
  });
});
