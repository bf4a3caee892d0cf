import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { findCondition } from "../../src/runtime/conditions.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { eventually } from "../support/kube.js";
import { applySeed, getSeed, seed, vaultSuite, waitForReason } from "../support/vault.js";
import { writeVaultRunConfig } from "../support/vault-run-config.js";

// The methods that make node load ICU code and data into the process: collation (localeCompare,
// Intl.Collator), Intl's formatters, and Date's string methods, which look up the local time zone
// through ICU even for UTC text. Each loaded part stays resident (src/runtime/utc-time.ts,
// text-order.ts); the operator's own work needs none of them.
const DATE_METHODS = [
  "toISOString",
  "toUTCString",
  "toString",
  "toDateString",
  "toTimeString",
  "toLocaleString",
  "toLocaleDateString",
  "toLocaleTimeString",
  "getTimezoneOffset",
  // The local-time accessors look the zone up too (the getUTC* ones do not).
  "getFullYear",
  "getMonth",
  "getDate",
  "getDay",
  "getHours",
  "getMinutes",
  "getSeconds",
] as const;

interface Trap {
  calls: string[];
  restore(): void;
}

/**
 * Whether the test or its harness made the call: the nearest frame in compiled code (dist/) is in
 * test/ or src/testenv/. Calls with no such frame (node's own, e.g. its HTTP server's Date header)
 * count against the operator: it started them. Only the nearest frame decides, since async stack
 * traces end in the test that started the operator.
 */
function fromHarness(stack: string): boolean {
  // Frames 0–2: the message, record() and the trap's own wrapper.
  const ours = stack
    .split("\n")
    .slice(3)
    .find((f) => f.includes("/dist/"));
  return ours !== undefined && /\/dist\/test\/|\/dist\/src\/testenv\//.test(ours);
}

function trapIcu(): Trap {
  const calls: string[] = [];
  const undo: (() => void)[] = [];
  const record = (what: string) => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 40;
    const stack = new Error().stack ?? "";
    Error.stackTraceLimit = limit;
    if (!fromHarness(stack)) calls.push(`${what}\n${stack.split("\n").slice(3, 10).join("\n")}`);
  };
  const wrap = (owner: object, name: string, label: string) => {
    const o = owner as Record<string, unknown>;
    const original = o[name] as (...a: unknown[]) => unknown;
    o[name] = function (this: unknown, ...args: unknown[]) {
      record(label);
      return original.apply(this, args);
    };
    undo.push(() => {
      o[name] = original;
    });
  };
  wrap(String.prototype, "localeCompare", "String#localeCompare");
  wrap(String.prototype, "normalize", "String#normalize");
  wrap(Number.prototype, "toLocaleString", "Number#toLocaleString");
  for (const m of DATE_METHODS) wrap(Date.prototype, m, `Date#${m}`);
  const intl = Intl as unknown as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(Intl)) {
    const original = intl[name];
    if (typeof original !== "function") continue;
    intl[name] = new Proxy(original, {
      construct(target, args, newTarget) {
        record(`new Intl.${name}`);
        return Reflect.construct(target, args, newTarget);
      },
      apply(target, self, args) {
        record(`Intl.${name}`);
        return Reflect.apply(target, self, args);
      },
    });
    undo.push(() => {
      intl[name] = original;
    });
  }
  return {
    calls,
    restore: () => {
      for (const u of undo) u();
    },
  };
}

describe("platform-operator run touches no ICU (Intl, collation, Date's string methods)", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningOperator | undefined;
  let trap: Trap;

  before(async () => {
    ({ client, ns } = await vaultSuite("no-icu"));
    const config = writeVaultRunConfig(ns, "no-icu", "NO_ICU_TEST_BAO");
    trap = trapIcu();
    const { Writable } = await import("node:stream");
    op = await startOperator({
      configPath: config,
      kubeconfig: sharedEnv().kubeconfigPath,
      // Logged at info and written (the logger's timestamps are part of what is checked).
      logStream: new Writable({ write: (_c, _e, cb) => cb() }),
    });
  });
  after(async () => {
    trap.restore();
    await op?.stop();
    client.close();
  });

  it("reconciles VaultSeeds (conditions, Events, references, the Lease) and serves probes and metrics", async () => {
    // Two conditions sorted and compared, a reference between paths, a failing seed (an Event and a
    // False condition with its transition time), and a few passes at the 2 s resync.
    await applySeed(client, seed(ns, "source", { path: `secret/${ns}/source`, data: { a: "<random:8>" } }));
    await applySeed(
      client,
      seed(ns, "copy", { path: `secret/${ns}/copy`, data: { b: `<ref:secret/${ns}/source#a>` } }),
    );
    await applySeed(client, seed(ns, "bad", { path: `outside/${ns}/bad`, data: { c: "<random:8>" } }));
    await waitForReason(client, ns, "source", "Reconciled");
    await waitForReason(client, ns, "copy", "Reconciled");
    const base = `http://127.0.0.1:${op!.probePort}`;
    const started = Date.now();
    const probes = await Promise.all(["/healthz", "/readyz", "/metrics"].map((p) => fetch(`${base}${p}`)));
    for (const r of probes) {
      assert.equal(r.status, 200);
      // The Date header is still there, written without Date#toUTCString, and it is now.
      const date = r.headers.get("date") ?? "";
      assert.match(date, /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/);
      assert.ok(Math.abs(Date.parse(date) - started) < 5_000, date);
      await r.text();
    }
    // Let the resync run passes over the settled objects too: 3 objects, at least two passes each.
    await eventually(
      async () => {
        const m = await (await fetch(`${base}/metrics`)).text();
        const counts = [
          ...m.matchAll(/^controller_runtime_reconcile_total\{controller="vaultseed"[^}]*\} (\d+)$/gm),
        ];
        return counts.reduce((n, c) => n + Number(c[1]), 0) >= 6 || undefined;
      },
      30_000,
      "six VaultSeed reconciles",
    );
    const bad = await getSeed(client, ns, "bad");
    assert.equal(findCondition(bad.status?.conditions, "Ready")?.status, "False");
    assert.deepEqual(trap.calls, [], `the operator touched ICU:\n${trap.calls.join("\n\n")}`);
  });
});
