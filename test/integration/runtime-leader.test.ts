import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { KubeClient } from "../../src/runtime/client.js";
import { LEASE } from "../../src/runtime/leaderelection.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";

const WORKER = fileURLToPath(new URL("../fixtures/le-worker.js", import.meta.url));
const LEASE_MS = 15_000;
const RETRY_MS = 2_000;

interface Line {
  ev: string;
  id: string;
  t: number;
  key?: string;
}

class Worker {
  readonly lines: Line[] = [];
  readonly proc: ChildProcess;
  constructor(
    readonly id: string,
    kubeconfig: string,
    ns: string,
  ) {
    this.proc = spawn(process.execPath, [WORKER, kubeconfig, ns, "le", id], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    createInterface({ input: this.proc.stdout! }).on("line", (l) => {
      try {
        this.lines.push(JSON.parse(l) as Line);
      } catch {
        // not ours
      }
    });
  }
  exited(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return Promise.resolve();
    return new Promise((r) => this.proc.once("exit", () => r()));
  }
}

/** [start, end] per reconcile of each key; a reconcile cut off by SIGKILL ends at the kill. */
function intervals(w: Worker, cutoff: number): Map<string, [number, number][]> {
  const open = new Map<string, number[]>();
  const out = new Map<string, [number, number][]>();
  for (const l of w.lines) {
    if (!l.key) continue;
    if (l.ev === "start") open.set(l.key, [...(open.get(l.key) ?? []), l.t]);
    if (l.ev === "end") {
      const s = open.get(l.key)!.shift()!;
      out.set(l.key, [...(out.get(l.key) ?? []), [s, l.t]]);
    }
  }
  for (const [k, starts] of open) for (const s of starts) out.set(k, [...(out.get(k) ?? []), [s, cutoff]]);
  return out;
}

describe("leader election between two manager processes", () => {
  let client: KubeClient;
  let ns: string;
  const workers: Worker[] = [];
  let touching = true;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-le");
    for (let i = 0; i < 10; i++) {
      await client.apply(
        CONFIGMAP,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm${i}`, namespace: ns } },
        { fieldManager: "t" },
      );
    }
  });
  after(async () => {
    touching = false;
    for (const w of workers) w.proc.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited()));
    client.close();
  });

  const holder = async () =>
    (await client.getOrUndefined<KubeObject & { spec?: { holderIdentity?: string } }>(LEASE, "le-letest", ns))
      ?.spec?.holderIdentity;

  it("hands over within the lease duration when the leader dies, and never reconciles a key in both", async () => {
    const a = new Worker("a", sharedEnv().kubeconfigPath, ns);
    workers.push(a);
    await eventually(async () => ((await holder()) === "a" ? true : undefined), 20_000, "a to lead");
    const b = new Worker("b", sharedEnv().kubeconfigPath, ns);
    workers.push(b);
    await eventually(() => b.lines.find((l) => l.ev === "ready"), 10_000, "b to start");

    // Keep changes flowing so both would reconcile if both thought they led.
    const touch = (async () => {
      let n = 0;
      while (touching) {
        const name = `cm${n++ % 10}`;
        await client
          .apply(
            CONFIGMAP,
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name, namespace: ns },
              data: { n: String(n) },
            },
            { fieldManager: "t" },
          )
          .catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    await new Promise((r) => setTimeout(r, 3000));
    assert.ok(
      a.lines.some((l) => l.ev === "start"),
      "the leader reconciles",
    );
    assert.ok(!b.lines.some((l) => l.ev === "start"), "the standby does not");

    const killedAt = Date.now();
    a.proc.kill("SIGKILL");
    await a.exited();
    await eventually(
      async () => ((await holder()) === "b" ? true : undefined),
      LEASE_MS + 3 * RETRY_MS + 2000,
      "b to take over",
    );
    const handover = Date.now() - killedAt;
    process.stdout.write(`# leader handover after SIGKILL: ${handover} ms (lease ${LEASE_MS} ms)\n`);
    assert.ok(handover <= LEASE_MS + 2 * RETRY_MS, `handover took ${handover} ms`);
    await eventually(() => b.lines.find((l) => l.ev === "start"), 10_000, "b to reconcile");

    const ia = intervals(a, killedAt);
    const ib = intervals(b, Date.now());
    for (const [key, bs] of ib) {
      for (const [bs0, bs1] of bs) {
        for (const [as0, as1] of ia.get(key) ?? []) {
          assert.ok(bs1 < as0 || bs0 > as1, `${key} reconciled by both at once`);
        }
      }
    }
    const firstB = b.lines.find((l) => l.ev === "start")!.t;
    assert.ok(firstB >= killedAt, "b reconciled nothing while a led");

    // A graceful stop releases the Lease: a standby takes over in about one retry period.
    const c = new Worker("c", sharedEnv().kubeconfigPath, ns);
    workers.push(c);
    await eventually(() => c.lines.find((l) => l.ev === "ready"), 10_000, "c to start");
    await new Promise((r) => setTimeout(r, 1000));
    const termAt = Date.now();
    b.proc.kill("SIGTERM");
    await b.exited();
    assert.equal(b.proc.exitCode, 0);
    await eventually(
      async () => ((await holder()) === "c" ? true : undefined),
      3 * RETRY_MS + 2000,
      "c to take over after release",
    );
    const released = Date.now() - termAt;
    process.stdout.write(`# leader handover after graceful stop: ${released} ms\n`);
    touching = false;
    await touch;
  });
});
