import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { POD, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import {
  Component,
  clusterNames,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  podName,
} from "../../src/targets/openbao/identity.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { openbaoTarget } from "../../src/targets/openbao/target.js";
import { ROOT_TOKEN_KEY } from "../../src/targets/openbao/workload/init/init.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// Five clusters initialized at once while OpenBao is slow to answer sys/init: the case where the
// Go peer lost two root tokens (its request timed out while OpenBao completed the init, and a
// second try found it initialized). Each cluster's pod 0 is a stand-in OpenBao on loopback that
// initializes at once, as OpenBao does, but holds its answer for SLOW_MS — longer than the
// operator's ordinary 10 s request timeout — and answers a second init "already initialized".
// The real target runs in this process against the real API server; pods are created by hand and
// marked Running (there is no node), and the workload reaches each stand-in through the target's
// baoClient seam. Every root token OpenBao handed out must be the one kept in its Secret.

const CLUSTERS = 5;
const SLOW_MS = 15_000;
const NAME = "bao";

/** A stand-in for one uninitialized OpenBao: health, leader, and a slow sys/init. */
class SlowInitBao {
  initCalls = 0;
  token: string | undefined;
  private constructor(
    private readonly server: Server,
    readonly addr: string,
  ) {}

  static async start(): Promise<SlowInitBao> {
    let self: SlowInitBao | undefined;
    const server = createServer((req, res) => void self!.handle(req, res));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    self = new SlowInitBao(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for await (const _ of req) {
      // the body is not needed
    }
    const send = (status: number, body: unknown) => {
      if (res.destroyed) return;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? "").split("?")[0];
    if (path === "/v1/sys/health")
      return send(200, { initialized: this.token !== undefined, sealed: false, standby: false });
    if (path === "/v1/sys/leader") return send(200, { leader_address: "", is_self: true });
    if (path === "/v1/sys/init" && req.method === "PUT") {
      this.initCalls++;
      if (this.token) return send(400, { errors: ["Vault is already initialized"] });
      // Initialized now; the answer comes late.
      this.token = `s.${randomBytes(12).toString("hex")}`;
      const token = this.token;
      await new Promise((r) => setTimeout(r, SLOW_MS));
      return send(200, { root_token: token, keys: [], keys_base64: [] });
    }
    send(404, { errors: [] });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

describe("openbao target: five clusters initialized at once under a slow sys/init", () => {
  let admin: KubeClient;
  let manager: Manager;
  const namespaces: string[] = [];
  const baos = new Map<string, SlowInitBao>();

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    for (let i = 0; i < CLUSTERS; i++) {
      const ns = await freshNamespace(admin, "obslow");
      namespaces.push(ns);
      baos.set(ns, await SlowInitBao.start());
    }
    // The workload dials bao-0.<peer service>.<namespace>.svc...: the namespace picks the stand-in.
    const baoClient = (ep: { address: string }) => {
      const ns = new URL(ep.address).hostname.split(".")[2] ?? "";
      const bao = baos.get(ns);
      if (!bao) throw new Error(`no stand-in OpenBao for ${ep.address}`);
      return new BaoClient({ address: bao.addr, timeoutMs: 10_000 });
    };
    manager = new Manager({
      target: "openbao",
      client: clientFor(sharedEnv().kubeconfigPath),
      log: silentLogger(),
      namespaces,
    });
    const config = parseOpenBaoConfig({ pollInterval: "1s" }, "targets.openbao");
    await openbaoTarget(undefined, { baoClient }).setup(manager, config);
    await manager.start();
  });
  after(async () => {
    await manager?.stop();
    for (const b of baos.values()) await b.close();
    admin?.close();
  });

  it("keeps every root token OpenBao handed out, initializing each cluster once", {
    timeout: 300_000,
  }, async () => {
    for (const ns of namespaces)
      await createOpenBaoCluster(admin, ns, NAME, { replicas: 1, tls: { enabled: false } });
    // Pod 0 of each, as the StatefulSet would make it, Running (no node runs it).
    await Promise.all(
      namespaces.map(async (ns) => {
        const name = podName({ name: NAME, namespace: ns }, 0);
        // No controller-manager here to make it: pods are refused without their ServiceAccount.
        await admin.create(SERVICE_ACCOUNT, {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "default", namespace: ns },
        });
        await admin.create(POD, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            name,
            namespace: ns,
            labels: { [LABEL_CLUSTER]: NAME, [LABEL_COMPONENT]: Component.Server },
          },
          spec: { containers: [{ name: "openbao", image: "openbao/openbao:stand-in" }] },
        });
        await admin.mergePatch(POD, name, ns, { status: { phase: "Running" } }, "status");
      }),
    );
    const started = performance.now();
    await eventually(
      async () => {
        for (const ns of namespaces) {
          const c = (await admin.get(OPENBAOCLUSTER, NAME, ns)) as OpenBaoCluster;
          if (c.status?.initialized !== true) return undefined;
        }
        return true;
      },
      240_000,
      `${CLUSTERS} clusters initialized`,
    );
    const took = performance.now() - started;
    process.stdout.write(
      `# ${CLUSTERS} clusters initialized at once, sys/init answering after ${SLOW_MS / 1000} s: all initialized in ${(took / 1000).toFixed(1)} s\n`,
    );
    for (const ns of namespaces) {
      const bao = baos.get(ns)!;
      assert.equal(bao.initCalls, 1, `${ns}: OpenBao was asked to initialize once`);
      assert.ok(bao.token, `${ns}: OpenBao handed out a root token`);
      const secret = await admin.get(SECRET, clusterNames({ name: NAME, namespace: ns }).rootTokenSecret, ns);
      const kept = Buffer.from(
        (secret["data"] as Record<string, string>)[ROOT_TOKEN_KEY] ?? "",
        "base64",
      ).toString();
      assert.equal(kept, bao.token, `${ns}: the root token kept is the one OpenBao handed out`);
    }
    // Every answer took longer than an ordinary request may: the init request's own deadline held.
    assert.ok(took >= SLOW_MS, `${took} ms`);
  });
});
