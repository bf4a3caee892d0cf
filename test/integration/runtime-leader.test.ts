import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { KubeClient } from "../../src/runtime/client.js";
import { LEASE } from "../../src/runtime/leaderelection.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { HoldingProxy, kubeconfigThrough, serverOf } from "../support/holding-proxy.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";

const WORKER = fileURLToPath(new URL("../fixtures/le-worker.js", import.meta.url));
// client-go's defaults, which the workers use.
const LEASE_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;
const RETRY_MS = 2_000;

interface Line {
  ev: string;
  id: string;
  t: number;
  key?: string;
}

class Worker {
  readonly proc: ChildProcess;
  constructor(
    readonly id: string,
    kubeconfig: string,
    ns: string,
    lease: string,
    readonly ledger: string,
  ) {
    this.proc = spawn(process.execPath, [WORKER, kubeconfig, ns, lease, id, ledger], {
      stdio: ["ignore", "inherit", "inherit"],
    });
  }
  get lines(): Line[] {
    return readLedger(this.ledger).filter((l) => l.id === this.id);
  }
  has(ev: string): Line | undefined {
    return this.lines.find((l) => l.ev === ev);
  }
  exited(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return Promise.resolve();
    return new Promise((r) => this.proc.once("exit", () => r()));
  }
}

function readLedger(file: string): Line[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

/**
 * [start, end] of every reconcile per process and key. A reconcile still open when its process
 * ended is closed at `cutoff[id]`: the process's own "lost" line (it exits in the same
 * synchronous step), or the moment the test killed it.
 */
function intervals(lines: Line[], cutoff: Record<string, number>): Map<string, [number, number, string][]> {
  const open = new Map<string, number[]>();
  const out = new Map<string, [number, number, string][]>();
  const push = (key: string, iv: [number, number, string]) => out.set(key, [...(out.get(key) ?? []), iv]);
  for (const l of lines) {
    if (!l.key) continue;
    const k = `${l.id}\u0000${l.key}`;
    if (l.ev === "start") open.set(k, [...(open.get(k) ?? []), l.t]);
    if (l.ev === "end") push(l.key, [open.get(k)!.shift()!, l.t, l.id]);
  }
  for (const [k, starts] of open) {
    const [id, key] = k.split("\u0000") as [string, string];
    const end = cutoff[id] ?? Number.POSITIVE_INFINITY;
    for (const s of starts) push(key, [s, end, id]);
  }
  return out;
}

/** No key is ever reconciled by two processes in overlapping intervals. */
function assertNoOverlap(lines: Line[], cutoff: Record<string, number>): number {
  let compared = 0;
  for (const [key, ivs] of intervals(lines, cutoff)) {
    for (const [s0, e0, id0] of ivs) {
      for (const [s1, e1, id1] of ivs) {
        if (id0 >= id1) continue;
        compared++;
        assert.ok(e0 < s1 || e1 < s0, `${key} reconciled by ${id0} [${s0}, ${e0}] and ${id1} [${s1}, ${e1}]`);
      }
    }
  }
  return compared;
}

describe("leader election between two manager processes", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;
  const workers: Worker[] = [];
  let touching = false;
  let touch: Promise<void> = Promise.resolve();

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-le");
    dir = mkdtempSync(join(tmpdir(), "rt-le-"));
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
    await touch;
    for (const w of workers) w.proc.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited()));
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const holder = async (lease: string) =>
    (await client.getOrUndefined<KubeObject & { spec?: { holderIdentity?: string } }>(LEASE, lease, ns))?.spec
      ?.holderIdentity;

  /** Keeps changes flowing, so both processes would reconcile if both thought they led. */
  const startTouching = () => {
    touching = true;
    touch = (async () => {
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
  };
  const stopTouching = async () => {
    touching = false;
    await touch;
  };

  it("hands over within the lease duration when the leader dies, and never reconciles a key in both", async () => {
    const ledger = join(dir, "killed.jsonl");
    const a = new Worker("a", sharedEnv().kubeconfigPath, ns, "le", ledger);
    workers.push(a);
    await eventually(
      async () => ((await holder("le-letest")) === "a" ? true : undefined),
      20_000,
      "a to lead",
    );
    const b = new Worker("b", sharedEnv().kubeconfigPath, ns, "le", ledger);
    workers.push(b);
    await eventually(() => b.has("ready"), 10_000, "b to start");
    startTouching();
    await eventually(() => a.lines.filter((l) => l.ev === "end").length >= 20, 20_000, "a to reconcile");
    assert.ok(!b.has("start"), "the standby does not reconcile");

    const killedAt = Date.now();
    a.proc.kill("SIGKILL");
    await a.exited();
    await eventually(
      async () => ((await holder("le-letest")) === "b" ? true : undefined),
      LEASE_MS + 3 * RETRY_MS + 5000,
      "b to take over",
    );
    process.stdout.write(
      `# leader handover after SIGKILL: ${Date.now() - killedAt} ms (lease ${LEASE_MS} ms)\n`,
    );
    await eventually(() => b.has("start"), 10_000, "b to reconcile");
    assert.ok(b.has("start")!.t >= killedAt, "b reconciled nothing while a led");
    assertNoOverlap(readLedger(ledger), { a: killedAt });

    // A graceful stop releases the Lease: a standby takes over in about one retry period.
    const c = new Worker("c", sharedEnv().kubeconfigPath, ns, "le", ledger);
    workers.push(c);
    await eventually(() => c.has("ready"), 10_000, "c to start");
    const termAt = Date.now();
    b.proc.kill("SIGTERM");
    await b.exited();
    assert.equal(b.proc.exitCode, 0);
    assert.ok(b.has("stopped"), "b stopped through its own shutdown path");
    await eventually(
      async () => ((await holder("le-letest")) === "c" ? true : undefined),
      3 * RETRY_MS + 5000,
      "c to take over after release",
    );
    process.stdout.write(`# leader handover after graceful stop: ${Date.now() - termAt} ms\n`);
    await stopTouching();
    c.proc.kill("SIGKILL");
    await c.exited();
  });

  it("a leader whose connection goes silent stops by the renew deadline, exits non-zero, and never overlaps the next", async () => {
    const ledger = join(dir, "silent.jsonl");
    const proxy = await HoldingProxy.start(serverOf(sharedEnv().kubeconfigPath));
    try {
      const viaProxy = kubeconfigThrough(sharedEnv().kubeconfigPath, proxy.port, join(dir, "via-proxy.json"));
      const a = new Worker("a", viaProxy, ns, "le2", ledger);
      workers.push(a);
      await eventually(
        async () => ((await holder("le2-letest")) === "a" ? true : undefined),
        20_000,
        "a to lead",
      );
      const b = new Worker("b", sharedEnv().kubeconfigPath, ns, "le2", ledger);
      workers.push(b);
      await eventually(() => b.has("ready"), 10_000, "b to start");
      startTouching();
      await eventually(() => a.lines.filter((l) => l.ev === "end").length >= 20, 20_000, "a to reconcile");
      assert.ok(!b.has("start"), "the standby does not reconcile");

      // a keeps running, but nothing it sends reaches the API server any more, nor the answers it.
      const heldAt = Date.now();
      proxy.hold("all");
      await eventually(() => a.has("lost"), RENEW_DEADLINE_MS + 2 * RETRY_MS + 10_000, "a to give up");
      await a.exited();
      assert.equal(a.proc.exitCode, 1, "a leader that lost its Lease exits non-zero");
      const lostAt = a.has("lost")!.t;
      await eventually(
        async () => ((await holder("le2-letest")) === "b" ? true : undefined),
        LEASE_MS + 3 * RETRY_MS + 10_000,
        "b to take over",
      );
      await eventually(() => b.has("start"), 10_000, "b to reconcile");
      const firstB = b.has("start")!.t;
      process.stdout.write(
        `# silent leader: stopped ${lostAt - heldAt} ms after its traffic was held (renew deadline ${RENEW_DEADLINE_MS} ms); ` +
          `standby's first reconcile ${firstB - lostAt} ms after that\n`,
      );
      // The property that matters: the old leader stopped before the new one started.
      assert.ok(lostAt < firstB, "a stopped before b started reconciling");
      const aLast = Math.max(...a.lines.map((l) => l.t));
      assert.equal(aLast, lostAt, "a wrote nothing after it lost the Lease");
      // Let b work for a while on the same keys, then compare every interval.
      await eventually(
        () => b.lines.filter((l) => l.ev === "end").length >= 20,
        20_000,
        "b to reconcile for a while",
      );
      await stopTouching();
      const compared = assertNoOverlap(readLedger(ledger), { a: lostAt });
      assert.ok(compared > 0, "the ledger holds reconciles of the same keys by both processes");
    } finally {
      await stopTouching();
      await proxy.close();
    }
  });
});
