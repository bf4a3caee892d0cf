import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";
import { ApiError, isResourceVersionTooLarge } from "../../src/runtime/errors.js";
import { Informer } from "../../src/runtime/informer.js";
import { createLogger } from "../../src/runtime/log.js";
import { WITHHELD } from "../../src/runtime/withhold.js";

// A real kube-apiserver cannot be made to put a chosen value into a watch ERROR event or to cut an
// answer short on cue, so these cases are served by a loopback HTTP server speaking the same wire
// format (JSON lines of {type, object}; a Status on failure). The withholding of request errors is
// proven against the real API server in the integration tests (openbao-secrets, gitlab-secrets).
const CANARY = "canary-watch-7f3a91";

function statusEvent(code: number, reason: string, message: string, details?: unknown): string {
  const object = { kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message, details };
  return `${JSON.stringify({ type: "ERROR", object })}\n`;
}

type Answer = (res: ServerResponse) => void;

describe("errors arriving in a watch stream are withheld like request errors", () => {
  let answers: Answer[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.endsWith("/configmaps/cut")) {
      // An answer cut short in the middle of the object's data.
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"kind":"ConfigMap","data":{"k":"${CANARY}`);
      return;
    }
    if (url.searchParams.get("watch") !== "true") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          kind: "ConfigMapList",
          apiVersion: "v1",
          metadata: { resourceVersion: "5" },
          items: [],
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    const next = answers.shift();
    if (next) next(res);
    // Once the planned answers are spent, the watch stays open and quiet until the test ends.
  });
  let client: KubeClient;

  before(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    client = new KubeClient({
      server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      source: "test",
      requestAuth: async () => ({}),
    });
  });
  after(() => {
    client.close();
    server.closeAllConnections();
    server.close();
  });

  it("an ERROR event's message and causes keep field and reason and withhold the value", async () => {
    answers = [
      (res) =>
        res.end(
          statusEvent(
            422,
            "Invalid",
            `ConfigMap "c" is invalid: data.k: Invalid value: "${CANARY}": too long`,
            {
              causes: [
                {
                  reason: "FieldValueInvalid",
                  field: "data.k",
                  message: `Invalid value: "${CANARY}": too long`,
                },
              ],
            },
          ),
        ),
    ];
    const w = client.watch(CONFIGMAP, { namespace: "ns", resourceVersion: "5" }, () => {});
    const e = await w.done.then(
      () => assert.fail("the watch should have failed"),
      (err: unknown) => err,
    );
    assert.ok(e instanceof ApiError);
    assert.equal(e.code, 422);
    assert.equal(e.reason, "Invalid");
    assert.equal(e.message, `ConfigMap "c" is invalid: data.k: Invalid value: ${WITHHELD}: too long`);
    const causes = (e.details as { causes: { field: string; message: string }[] }).causes;
    assert.equal(causes[0]!.field, "data.k");
    assert.equal(causes[0]!.message, `Invalid value: ${WITHHELD}: too long`);
    assert.ok(!JSON.stringify({ m: e.message, d: e.details, s: e.stack }).includes(CANARY));
  });

  it("keeps an ERROR event's details, so a resourceVersion the server has not reached still relists", async () => {
    answers = [
      (res) =>
        res.end(
          statusEvent(504, "Timeout", "Timeout: Too large resource version: 900, current: 5", {
            causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
            retryAfterSeconds: 1,
          }),
        ),
    ];
    const w = client.watch(CONFIGMAP, { namespace: "ns", resourceVersion: "900" }, () => {});
    const e = await w.done.then(
      () => assert.fail("the watch should have failed"),
      (err: unknown) => err,
    );
    assert.ok(isResourceVersionTooLarge(e));
    assert.ok((e as ApiError).details, "details kept");
  });

  it("a line that is not JSON fails the watch naming where, not what", async () => {
    answers = [(res) => res.end(`{"type":"ADDED","object":{"data":{"k":${CANARY}}}}\n`)];
    const w = client.watch(CONFIGMAP, { namespace: "ns", resourceVersion: "5" }, () => {});
    const e = await w.done.then(
      () => assert.fail("the watch should have failed"),
      (err: unknown) => err,
    );
    assert.ok(e instanceof Error);
    assert.match(
      e.message,
      /^WATCH configmaps: the answer is not valid JSON (\(at character \d+\) )?\(\d+ bytes, content withheld\)$/,
    );
    assert.ok(!`${e.message} ${e.stack} ${String(e.cause)}`.includes(CANARY), e.message);
    // JSON.parse on its own would have quoted it: the test would catch a return to it.
    try {
      JSON.parse(`${CANARY}`);
    } catch (raw) {
      assert.ok((raw as Error).message.includes(CANARY.slice(0, 6)), "this Node quotes the text it fails on");
    }
  });

  it("a request's answer that is not JSON is refused the same way", async () => {
    const e = await client.get(CONFIGMAP, "cut", "ns").then(
      () => assert.fail("the read should have failed"),
      (err: unknown) => err as Error,
    );
    assert.match(e.message, /^GET \/api\/v1\/namespaces\/ns\/configmaps\/cut: the answer is not valid JSON/);
    assert.ok(!`${e.message} ${e.stack}`.includes(CANARY), e.message);
  });

  it("the informer logs both failures without the value and keeps watching", async () => {
    const lines: string[] = [];
    let wake: (() => void) | undefined;
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        wake?.();
        done();
      },
    });
    answers = [
      (res) => res.end(statusEvent(422, "Invalid", `data.k: Invalid value: "${CANARY}": too long`)),
      (res) => res.end(`{"type":"MODIFIED","object":${CANARY}}\n`),
    ];
    const inf = new Informer(client, CONFIGMAP, {
      namespaces: ["ns"],
      backoffMinMs: 10,
      backoffMaxMs: 20,
      log: createLogger({ stream, level: "debug" }),
    });
    const failures = () => lines.filter((l) => l.includes("list/watch failed"));
    const twoFailures = new Promise<void>((resolve) => {
      wake = () => {
        if (failures().length >= 2) resolve();
      };
    });
    inf.start();
    try {
      await twoFailures;
    } finally {
      await inf.stop();
    }
    const [first, second] = failures();
    assert.ok(first!.includes(`data.k: Invalid value: ${WITHHELD}: too long`), first);
    assert.ok(second!.includes("the answer is not valid JSON"), second);
    for (const l of lines) assert.ok(!l.includes(CANARY), l);
  });
});
