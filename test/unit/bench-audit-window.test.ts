import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { auditLines, describeRequests, requestsInWindow, warnLines } from "../../bench/audit-window.js";

// The parsing behind bench:openbao's "0 warn lines, only re-watches": audit events as the API
// server writes them (audit.k8s.io/v1 Event, one JSON line per stage) and pino's lines.

const OPERATOR = { user: "testenv-node-admin", userAgentPrefix: "platform-operator" };
const from = Date.parse("2026-12-07T10:00:00Z");
const to = Date.parse("2026-12-07T10:10:00Z");

function event(o: {
  id: string;
  verb: string;
  at: string;
  stage?: string;
  user?: string;
  agent?: string;
  resource?: string;
  subresource?: string;
  uri?: string;
}): string {
  return JSON.stringify({
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "Metadata",
    auditID: o.id,
    stage: o.stage ?? "ResponseComplete",
    requestURI: o.uri ?? `/api/v1/${o.resource ?? "pods"}?watch=true`,
    verb: o.verb,
    user: { username: o.user ?? OPERATOR.user, groups: ["system:masters", "system:authenticated"] },
    userAgent: o.agent ?? "platform-operator/openbao",
    ...(o.resource
      ? { objectRef: { resource: o.resource, subresource: o.subresource, apiVersion: "v1" } }
      : {}),
    requestReceivedTimestamp: o.at,
    stageTimestamp: o.at,
  });
}

describe("bench audit window: the operator's requests in the audit log", () => {
  it("counts one request per audit ID by verb and resource, only the operator's, only those received in the window", () => {
    const lines = [
      // A watch: ResponseStarted when it begins, ResponseComplete when it ends: one request.
      event({
        id: "w1",
        verb: "watch",
        resource: "pods",
        at: "2026-12-07T10:01:00.123456Z",
        stage: "ResponseStarted",
      }),
      event({ id: "w1", verb: "watch", resource: "pods", at: "2026-12-07T10:01:00.123456Z" }),
      event({
        id: "w2",
        verb: "watch",
        resource: "pods",
        at: "2026-12-07T10:06:00.5Z",
        stage: "ResponseStarted",
      }),
      event({
        id: "w3",
        verb: "watch",
        resource: "secrets",
        at: "2026-12-07T10:02:00Z",
        stage: "ResponseStarted",
      }),
      event({
        id: "p1",
        verb: "patch",
        resource: "openbaoclusters",
        subresource: "status",
        at: "2026-12-07T10:03:00Z",
      }),
      event({ id: "d1", verb: "get", uri: "/apis?timeout=32s", at: "2026-12-07T10:04:00Z" }),
      // Received before the window (a watch that began earlier and ended in it), and at its end.
      event({ id: "old", verb: "watch", resource: "pods", at: "2026-12-07T09:59:59.999999Z" }),
      event({ id: "end", verb: "list", resource: "pods", at: "2026-12-07T10:10:00Z" }),
      // The same admin user but another program, and the operator's agent under another user.
      event({
        id: "s1",
        verb: "watch",
        resource: "pods",
        at: "2026-12-07T10:05:00Z",
        agent: "kube-scheduler/v1.37.0",
      }),
      event({ id: "b1", verb: "get", resource: "pods", at: "2026-12-07T10:05:00Z", agent: "bench-openbao" }),
      event({
        id: "sa",
        verb: "get",
        resource: "pods",
        at: "2026-12-07T10:05:00Z",
        user: "system:serviceaccount:x:y",
      }),
      '{"kind":"Event","auditID":"cut',
      "",
    ];
    assert.deepEqual(requestsInWindow(lines, OPERATOR, from, to), {
      "watch pods": 2,
      "watch secrets": 1,
      "patch openbaoclusters/status": 1,
      "get /apis": 1,
    });
  });

  it("says only re-watches when every request is a watch, and lists the most frequent first", () => {
    assert.deepEqual(describeRequests({ "watch secrets": 1, "watch pods": 3 }), {
      listed: "watch pods ×3, watch secrets ×1",
      onlyWatches: true,
    });
    assert.deepEqual(describeRequests({ "watch pods": 3, "get leases": 1 }), {
      listed: "watch pods ×3, get leases ×1",
      onlyWatches: false,
    });
    assert.equal(describeRequests({}).listed, "none");
  });

  it("reads the rotated backups before the current log", () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "audit-2026-12-07T09-00-00.000.log"), "old-1\nold-2\n");
    writeFileSync(join(dir, "audit.log"), "new-1\n");
    writeFileSync(join(dir, "audit-policy.json"), "{}");
    assert.deepEqual(
      auditLines(join(dir, "audit.log")).filter((l) => l),
      ["old-1", "old-2", "new-1"],
    );
  });
});

describe("bench audit window: the operator's lines at warn or above", () => {
  it("keeps warn, error and fatal by label or pino number and any line that is not JSON, messages only", () => {
    const output = [
      JSON.stringify({ level: "info", msg: "reconciled", namespace: "a" }),
      JSON.stringify({ level: "warn", msg: "OpenBao answered slowly", token: "s.secret-value" }),
      JSON.stringify({ level: 50, msg: "write refused" }),
      JSON.stringify({ level: 30, msg: "a pass" }),
      JSON.stringify({ level: "error" }),
      "(node:12) Warning: something from node itself",
      "",
    ].join("\n");
    const got = warnLines(output);
    assert.deepEqual(got, [
      "warn: OpenBao answered slowly",
      "50: write refused",
      "error: (no msg)",
      "(not JSON) (node:12) Warning: something from node itself",
    ]);
    assert.ok(!got.join("\n").includes("secret-value"));
  });

  it("finds nothing in a quiet output", () => {
    assert.deepEqual(warnLines(`${JSON.stringify({ level: "info", msg: "a pass" })}\n`), []);
  });
});
