import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { fileURLToPath } from "node:url";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { renderConfig, renderSelfInitRequests } from "../../src/targets/openbao/workload/config/index.js";
import { baoBinary, ensureBinaries } from "../../src/testenv/binaries.js";
import { baoCall, type DevOpenBao, startDevOpenBao } from "../../src/testenv/openbao.js";
import { freePort, LOOPBACK } from "../../src/testenv/ports.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { waitUntil } from "../../src/testenv/wait.js";
import {
  ACME_DIRECTORY,
  GOLDEN_CASES,
  GREETING,
  SELF_INIT_CHECK_TOKEN,
  TRANSIT_ADDRESS,
} from "../fixtures/openbao/golden/cases.js";
import {
  call,
  type KubeAccess,
  localize,
  makeNodeDir,
  makeTls,
  type NodeDir,
  newSealKey,
  portOpen,
  type RunningBao,
  startBao,
  waitForHealth,
} from "../fixtures/openbao/golden/run-bao.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { grantInNamespace, serviceAccountToken } from "../support/rbac.js";

/**
 * Every golden config.hcl runs on the real `bao` (the pinned 2.7.2), moved to loopback: it must start,
 * and each mode must do what it is for — the static and transit seals unseal, self-init applies its
 * requests, a read replica joins a voter as a non-voter, audit devices and telemetry are live.
 */

const GOLDEN_DIR = fileURLToPath(new URL("../../../test/fixtures/openbao/golden/", import.meta.url));
const BAO_VERSION = "2.7.2";
const POD: ResourceType = { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true };

function golden(name: string): string {
  return readFileSync(join(GOLDEN_DIR, name), "utf8");
}

describe("golden config.hcl files on the real bao", () => {
  let bao: string;
  let dir: string;
  let ca: string;
  let tlsDir: string;
  const running: RunningBao[] = [];
  const servers: Server[] = [];
  let transit: DevOpenBao | undefined;
  let admin: KubeClient;
  let kube: KubeAccess;

  before(async () => {
    bao = baoBinary(await ensureBinaries(), BAO_VERSION);
    dir = makeTempDir("openbao-config");
    tlsDir = join(dir, "pki");
    ca = (await makeTls(tlsDir)).caPem;
    // The kubernetes service registration is real too: OpenBao labels its pod object on the real
    // API server with the ServiceAccount rights the identity service grants.
    const env = sharedEnv();
    admin = clientFor(env.kubeconfigPath);
    const namespace = await freshNamespace(admin, "obcfg");
    const token = await serviceAccountToken(admin, namespace, "openbao");
    await grantInNamespace(admin, namespace, "openbao", "openbao-service-registration", [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "update", "patch"] },
    ]);
    kube = { server: env.server, caPem: env.caPem, token, namespace };
  });
  after(async () => {
    await Promise.all(running.map((r) => r.stop()));
    for (const s of servers) s.close();
    await transit?.stop();
    removeTempDir(dir);
    admin?.close();
  });

  /** The pod object a node registers itself on (never scheduled: only its labels matter here). */
  async function pod(name: string): Promise<void> {
    await admin.create(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: kube.namespace, labels: { app: "openbao-golden" } },
      spec: {
        serviceAccountName: "openbao",
        automountServiceAccountToken: false,
        containers: [{ name: "openbao", image: "openbao/openbao:2.7.2" }],
      },
    });
  }

  async function podLabels(name: string): Promise<Record<string, string>> {
    return (await admin.get(POD, name, kube.namespace)).metadata?.labels ?? {};
  }

  async function node(name: string, key = newSealKey()): Promise<NodeDir> {
    return makeNodeDir(join(dir, name), tlsDir, key);
  }

  async function run(
    n: NodeDir,
    files: Record<string, string>,
    nodeId: string,
    env?: Record<string, string>,
    // Whose configEnv the pod environment comes from; the golden clusters share name and TLS.
    cluster: OpenBaoCluster = GOLDEN_CASES[0]!.cluster,
  ) {
    const paths: string[] = [];
    for (const [file, text] of Object.entries(files)) {
      const path = join(n.root, file);
      await writeFile(path, text);
      paths.push(path);
    }
    if (!(await admin.getOrUndefined(POD, nodeId, kube.namespace))) await pod(nodeId);
    const r = await startBao(bao, n, paths, { nodeId, kube, env, cluster });
    running.push(r);
    return r;
  }

  /** Initializes an auto-unsealed node and waits until it is active; returns the root token. */
  async function initialize(r: RunningBao): Promise<string> {
    await waitForHealth(r, ca, [501], "an uninitialized node");
    const init = await call(r.node.addr, ca, "PUT", "sys/init", {
      body: { recovery_shares: 1, recovery_threshold: 1 },
      timeoutMs: 180_000,
    });
    assert.equal(init.status, 200, init.text);
    await waitForHealth(r, ca, [200], "the node to become active");
    return init.body.root_token as string;
  }

  /** Starts a TLS handshake naming `servername` and gives up on it after a few seconds. */
  function helloFor(port: number, servername: string): Promise<void> {
    return new Promise((resolve) => {
      const socket = tlsConnect({ host: LOOPBACK, port, servername, rejectUnauthorized: false });
      const done = () => {
        socket.destroy();
        resolve();
      };
      socket.setTimeout(5000, done);
      socket.once("secureConnect", done);
      socket.once("error", done);
    });
  }

  /** A closed loopback address, for peers that are not meant to answer. */
  async function nowhere(): Promise<string> {
    return `https://${LOOPBACK}:${await freePort()}`;
  }

  it("has a golden file for every case, and only those", () => {
    for (const c of GOLDEN_CASES) assert.ok(existsSync(join(GOLDEN_DIR, `${c.name}.hcl`)), c.name);
  });

  for (const name of ["operator-managed", "external"]) {
    it(`${name}: starts, verifies its TLS, auto-unseals with the static key once initialized`, async () => {
      const n = await node(name);
      const r = await run(
        n,
        { "config.hcl": localize(golden(`${name}.hcl`), n, await nowhere()) },
        `${name}-0`,
      );
      await initialize(r);
      const health = await call(n.addr, ca, "GET", "sys/health");
      assert.equal(health.body.sealed, false);
      assert.equal(health.body.initialized, true);
      // service_registration "kubernetes": the node keeps its pod's labels in step with its state.
      await waitUntil(
        async () => {
          const labels = await podLabels(`${name}-0`);
          return (
            labels["openbao-active"] === "true" &&
            labels["openbao-initialized"] === "true" &&
            labels["openbao-sealed"] === "false"
          );
        },
        { what: "the pod labelled active, initialized and unsealed", timeoutMs: 60_000, intervalMs: 250 },
      );
      // Restarted on the same data, the static key unseals it with no one calling unseal.
      await r.stop();
      const again = await run(
        n,
        { "config.hcl": localize(golden(`${name}.hcl`), n, await nowhere()) },
        `${name}-0`,
      );
      await waitForHealth(again, ca, [200], "the restarted node to unseal itself and become active");
    });
  }

  it("acme: starts with the ACME listener and asks the configured directory for a certificate", async () => {
    const n = await node("acme");
    let directoryHits = 0;
    const directory = createServer((socket) => {
      directoryHits++;
      socket.destroy();
    });
    servers.push(directory);
    await new Promise<void>((resolve) => directory.listen(0, LOOPBACK, resolve));
    const port = (directory.address() as { port: number }).port;
    const text = localize(golden("acme.hcl"), n, await nowhere(), {
      [ACME_DIRECTORY]: `https://${LOOPBACK}:${port}/directory`,
    });
    const r = await run(n, { "config.hcl": text }, "acme-0");
    // A TLS client asking for the ACME name makes OpenBao's ACME client go to the directory.
    await waitUntil(
      async () => {
        await helloFor(n.apiPort, "bao.example.test");
        return directoryHits > 0;
      },
      {
        what: "OpenBao to contact the ACME directory",
        timeoutMs: 120_000,
        intervalMs: 500,
        service: r.service,
      },
    );
    assert.ok(r.service.isRunning());
  });

  it("self-init: OpenBao initializes itself from the initialize blocks, values intact", async () => {
    const c = GOLDEN_CASES.find((x) => x.name === "self-init")!;
    const n = await node("self-init");
    const r = await run(
      n,
      {
        "config.hcl": localize(golden("self-init.hcl"), n, await nowhere()),
        "requests.hcl": golden("self-init.requests.hcl"),
      },
      "self-init-0",
    );
    await waitForHealth(r, ca, [200], "self-initialization to finish (active, unsealed)");
    const token = SELF_INIT_CHECK_TOKEN;
    const hello = await call(n.addr, ca, "GET", "secret/data/hello", { token });
    assert.equal(hello.status, 200, hello.text);
    assert.equal(hello.body.data.data.greeting, GREETING);
    const mount = await call(n.addr, ca, "GET", "sys/mounts/secret", { token });
    assert.equal(mount.body.data?.type ?? mount.body.type, "kv");
    assert.equal((mount.body.data?.options ?? mount.body.options).version, "2");
    const policy = await call(n.addr, ca, "GET", "sys/policies/acl/readers", { token });
    const requests = (
      c.cluster.spec as unknown as { selfInit: { requests: Array<{ policy?: { policy: string } }> } }
    ).selfInit.requests;
    assert.equal(policy.body.data.policy, requests[1]!.policy!.policy);
    const auth = await call(n.addr, ca, "GET", "sys/auth", { token });
    assert.equal(auth.body.data["userpass/"].type, "userpass");
    assert.equal(auth.body.data["userpass/"].description, "people");
    const audit = await call(n.addr, ca, "GET", "sys/audit", { token });
    assert.equal(audit.body.data["stdout/"]?.description, "audit to the log");
    // `when` reaches OpenBao's evaluator: the false condition skipped its request, the true one ran
    // with its headers.
    const mounts = await call(n.addr, ca, "GET", "sys/mounts", { token });
    assert.equal(mounts.body.data["never/"], undefined, "the request whose condition is false ran");
    assert.equal(mounts.body.data["headed/"]?.type, "kv");
  });

  it("transit-seal: unseals through a real transit OpenBao", async () => {
    transit = await startDevOpenBao({ version: BAO_VERSION });
    await baoCall(transit.addr, transit.rootToken, "POST", "sys/mounts/transit", { type: "transit" });
    await baoCall(transit.addr, transit.rootToken, "POST", "transit/keys/autounseal", {});
    const n = await node("transit");
    const text = localize(golden("transit-seal.hcl"), n, await nowhere(), {
      [TRANSIT_ADDRESS]: transit.addr,
    });
    const r = await run(n, { "config.hcl": text }, "transit-0", { BAO_TOKEN: transit.rootToken });
    await initialize(r);
    // The seal really went through transit: its key was used to encrypt OpenBao's root key.
    const key = await baoCall(transit.addr, transit.rootToken, "GET", "transit/keys/autounseal");
    assert.equal(key.data.name, "autounseal");
    await r.stop();
    const again = await run(n, { "config.hcl": text }, "transit-0", { BAO_TOKEN: transit.rootToken });
    await waitForHealth(again, ca, [200], "the restarted node to unseal through transit");
  });

  it("read-replica: joins a voter as a non-voter over verified TLS", async () => {
    const key = newSealKey();
    const voterDir = await node("rr-voter", key);
    const voter = await run(
      voterDir,
      { "config.hcl": localize(golden("operator-managed.hcl"), voterDir, await nowhere()) },
      "vault-0",
    );
    const root = await initialize(voter);
    const replicaDir = await node("rr-replica", key);
    await run(
      replicaDir,
      { "config.hcl": localize(golden("read-replica.hcl"), replicaDir, voterDir.addr) },
      "vault-read-0",
    );
    let servers: Array<{ node_id: string; voter: boolean }> = [];
    await waitUntil(
      async () => {
        const config = await call(voterDir.addr, ca, "GET", "sys/storage/raft/configuration", {
          token: root,
        });
        servers = config.body?.data?.config?.servers ?? [];
        return servers.some((s) => s.node_id === "vault-read-0");
      },
      { what: "the read replica in the voter's Raft configuration", timeoutMs: 120_000, intervalMs: 500 },
    );
    assert.deepEqual(servers.map((s) => [s.node_id, s.voter]).sort(), [
      ["vault-0", true],
      ["vault-read-0", false],
    ]);
  });

  /** Whether a TLS handshake with these client settings completes, and the protocol it agreed on. */
  function handshake(
    port: number,
    settings: { ecdhCurve?: string; maxVersion?: "TLSv1.2" | "TLSv1.3" },
  ): Promise<{ ok: true; protocol: string | null } | { ok: false; error: string }> {
    return new Promise((resolve) => {
      const socket = tlsConnect({ host: LOOPBACK, port, ca, servername: "localhost", ...settings });
      socket.setTimeout(10_000, () => {
        socket.destroy();
        resolve({ ok: false, error: "timed out" });
      });
      socket.once("secureConnect", () => {
        const protocol = socket.getProtocol();
        socket.destroy();
        resolve({ ok: true, protocol });
      });
      socket.once("error", (e) => resolve({ ok: false, error: e.message }));
    });
  }

  it("pq-tls: both listeners take only TLS 1.3 with a hybrid post-quantum group; classical and TLS 1.2 clients are refused", async () => {
    const n = await node("pq");
    const metricsPort = await freePort();
    const text = localize(golden("pq-tls.hcl"), n, await nowhere(), {
      '"0.0.0.0:8202"': `"${LOOPBACK}:${metricsPort}"`,
    });
    const r = await run(n, { "config.hcl": text }, "pq-0");
    // The operator's own client (Node's defaults, as the operator runs) initializes the node through it.
    await initialize(r);
    for (const [listener, port] of [
      ["API", n.apiPort],
      ["metrics-only", metricsPort],
    ] as const) {
      const hybrid = await handshake(port, { ecdhCurve: "X25519MLKEM768" });
      assert.deepEqual(
        hybrid,
        { ok: true, protocol: "TLSv1.3" },
        `${listener}: a client offering only X25519MLKEM768`,
      );
      const classical = await handshake(port, { ecdhCurve: "X25519:P-256:P-384" });
      assert.equal(classical.ok, false, `${listener}: a classical-only TLS 1.3 client must be refused`);
      const old = await handshake(port, { maxVersion: "TLSv1.2" });
      assert.equal(old.ok, false, `${listener}: a TLS 1.2 client must be refused`);
    }
    const metrics = await call(
      `https://${LOOPBACK}:${metricsPort}`,
      ca,
      "GET",
      "sys/metrics?format=prometheus",
    );
    assert.equal(metrics.status, 200, "the metrics-only listener serves metrics to a hybrid client");
  });

  it("audit-telemetry: declared audit devices are enabled and write, telemetry and JSON logs are on", async () => {
    const received: Buffer[] = [];
    const siem = createServer((socket) => socket.on("data", (d: Buffer) => received.push(d)));
    servers.push(siem);
    await new Promise<void>((resolve) => siem.listen(0, LOOPBACK, resolve));
    const siemPort = (siem.address() as { port: number }).port;
    const n = await node("audit");
    const text = localize(golden("audit-telemetry.hcl"), n, await nowhere(), {
      "127.0.0.1:9090": `${LOOPBACK}:${siemPort}`,
    });
    const r = await run(n, { "config.hcl": text }, "audit-0");
    const root = await initialize(r);
    let devices: Record<string, { type: string; description: string; options: Record<string, string> }> = {};
    await waitUntil(
      async () => {
        devices = (await call(n.addr, ca, "GET", "sys/audit", { token: root })).body?.data ?? {};
        return Object.keys(devices).length === 3;
      },
      { what: "three audit devices", timeoutMs: 60_000, intervalMs: 500, service: r.service },
    );
    assert.deepEqual(Object.keys(devices).sort(), ["file/", "siem/", "stdout/"]);
    assert.equal(devices["file/"]!.description, "to the audit volume");
    assert.equal(devices["file/"]!.options["file_path"], join(n.root, "audit/audit.log"));
    assert.equal(devices["siem/"]!.options["socket_type"], "tcp");
    await call(n.addr, ca, "GET", "sys/mounts", { token: root });
    await waitUntil(
      async () =>
        existsSync(join(n.root, "audit/audit.log")) &&
        statSync(join(n.root, "audit/audit.log")).size > 0 &&
        received.length > 0,
      { what: "entries in the file and socket audit devices", timeoutMs: 60_000, intervalMs: 250 },
    );
    const metrics = await call(n.addr, ca, "GET", "sys/metrics?format=prometheus", { token: root });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /^# (HELP|TYPE) /m);
    // log_format = "json": OpenBao's own log lines are JSON objects, none in the standard format; the
    // "stdout" audit device writes its entries (also JSON) into the same stream.
    const lines = readFileSync(join(n.root, "bao.log"), "utf8").split("\n");
    const json = lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(
      json.some((l) => typeof l["@level"] === "string"),
      "JSON server log lines",
    );
    assert.ok(
      json.some((l) => l["type"] === "request"),
      "audit entries from the stdout device",
    );
    assert.deepEqual(
      lines.filter((l) => /^\d{4}-\d\d-\d\dT\S+ \[(INFO|WARN|ERROR|DEBUG)\]/.test(l)),
      [],
      "no standard-format log lines",
    );
  });

  it("hostile strings reach OpenBao unchanged (self-init writes them, the API reads them back)", async () => {
    const values: Record<string, string> = {};
    const pieces = [
      '"',
      "\\",
      "$" + "{a}",
      "%{b}",
      "}",
      "{",
      "\n",
      "\t",
      "é",
      "😀",
      "\u2028",
      "#",
      "/*",
      "<<EOF",
      "$${x}",
    ];
    for (let i = 0; i < 40; i++) {
      let v = "";
      for (let j = 0; j < 1 + (i % 5); j++) v += pieces[(i * 7 + j * 3) % pieces.length];
      values[`k${i}${pieces[i % pieces.length]}`] = v + String.fromCodePoint(0x20 + ((i * 997) % 0xd000));
    }
    const n = await node("hostile");
    const description = 'audit " } $' + "{x} \n line";
    const cluster = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "hostile", namespace: "ns" },
      spec: {
        version: BAO_VERSION,
        storage: { size: "1Gi" },
        replicas: 1,
        audit: [
          { type: "file", path: "h", description, fileOptions: { filePath: join(n.root, "audit/h.log") } },
        ],
        selfInit: {
          enabled: true,
          requests: [
            {
              name: "kv",
              operation: "update",
              path: "sys/mounts/secret",
              // KV version 1: a just-mounted KV v2 upgrades its storage in the background and
              // refuses writes for that moment, which self-init (one pass, no retry) turns into a
              // failed initialization. The strings, not the KV version, are under test here.
              secretEngine: { type: "kv", options: { version: "1" } },
            },
            {
              name: "token",
              operation: "update",
              path: "auth/token/create-orphan",
              data: { id: "hostile-check", policies: ["root"] },
            },
            { name: "write", operation: "update", path: "secret/hostile", data: values },
          ],
        },
      },
    } as unknown as OpenBaoCluster;
    const opts = {
      paths: {
        dataDir: join(n.root, "data"),
        tlsCertFile: join(n.root, "tls/tls.crt"),
        tlsKeyFile: join(n.root, "tls/tls.key"),
        tlsCAFile: join(n.root, "tls/ca.crt"),
        staticSealKeyFile: join(n.root, "unseal/key"),
      },
      listenAddress: `${LOOPBACK}:${n.apiPort}`,
      clusterListenAddress: `${LOOPBACK}:${n.clusterPort}`,
      peers: [LOOPBACK],
      peerPort: await freePort(),
    };
    const r = await run(
      n,
      { "config.hcl": renderConfig(cluster, opts), "requests.hcl": renderSelfInitRequests(cluster) },
      "hostile-0",
      undefined,
      cluster,
    );
    await waitForHealth(r, ca, [200], "self-initialization with hostile values");
    const read = await call(n.addr, ca, "GET", "secret/hostile", { token: "hostile-check" });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.data, values);
    const audit = await call(n.addr, ca, "GET", "sys/audit", { token: "hostile-check" });
    assert.equal(audit.body.data["h/"].description, description);
    assert.ok(await portOpen(n.apiPort));
  });
});
