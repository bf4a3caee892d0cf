import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import type { KubeClient } from "../../src/runtime/client.js";
import { Controller } from "../../src/runtime/controller.js";
import { LEASE } from "../../src/runtime/leaderelection.js";
import type { Logger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";

type Lease = KubeObject & { spec?: { holderIdentity?: string | null } };

function capture(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const sink = new Writable({
    write(c, _e, cb) {
      out.push(String(c));
      cb();
    },
  });
  return {
    log: pino({ level: "debug" }, sink),
    lines: () =>
      out
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe("manager shutdown", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-stop");
    await client.create(CONFIGMAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "stuck", namespace: ns },
    });
    await client.create(CONFIGMAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "polite", namespace: ns },
    });
  });
  after(() => client.close());

  it("releases the Lease by the deadline even when a reconcile hangs, and aborts the ones that listen", async () => {
    const { log, lines } = capture();
    const SHUTDOWN_MS = 3_000;
    const manager = new Manager({
      target: "stoptest",
      client,
      log,
      namespaces: [ns],
      leaderElection: { namespace: ns, leaseName: "stop", identity: "stopper" },
      shutdownTimeoutMs: SHUTDOWN_MS,
      onLostLeadership: () => assert.fail("leadership must not be lost here"),
    });
    const running = new Set<string>();
    let politeAborted = false;
    const controller = new Controller({
      name: "stoptest",
      log,
      concurrency: 2,
      reconcile: async (key, ctx) => {
        running.add(key);
        if (key.endsWith("/stuck")) await new Promise(() => {}); // ignores its signal: never ends
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener(
            "abort",
            () => {
              politeAborted = true;
              resolve();
            },
            { once: true },
          ),
        );
        return undefined;
      },
    });
    controller.watchPrimary(manager.informer(CONFIGMAP));
    manager.add(controller);
    await manager.start();
    assert.ok(manager.isLeader);
    await eventually(() => (running.size === 2 ? true : undefined), 20_000, "both reconciles to be running");

    const started = performance.now();
    let stopped = false;
    const stopping = manager.stop().then(() => {
      stopped = true;
    });
    // Generous: the point is that stop() returns at all while a reconcile never does.
    await eventually(() => (stopped ? true : undefined), SHUTDOWN_MS + 20_000, "stop() to return");
    await stopping;
    const took = performance.now() - started;
    process.stdout.write(
      `# shutdown with a hung reconcile: ${Math.round(took)} ms (deadline ${SHUTDOWN_MS} ms)\n`,
    );

    assert.ok(politeAborted, "the reconcile that listens to its signal was aborted");
    const lease = await client.get<Lease>(LEASE, "stop-stoptest", ns);
    assert.equal(lease.spec?.holderIdentity ?? null, null, "the Lease was released");
    assert.ok(
      lines().some((l) => String(l["msg"]).startsWith("shutdown deadline")),
      "the abandoned reconcile is reported",
    );
    assert.ok(lines().some((l) => l["msg"] === "released the Lease"));
  });
});
