import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  baoCall,
  type ControlPlane,
  configureKubernetesAuth,
  type DevOpenBao,
  ensureNamespace,
  ensureServiceAccount,
  KUBERNETES_VERSION,
  KubeHttp,
  kubernetesLogin,
  liveChildren,
  requestServiceAccountToken,
  sharedEnv,
  startControlPlane,
  startDevOpenBao,
  uniqueName,
} from "../../src/testenv/index.js";
import { portIsFree } from "../../src/testenv/ports.js";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("shared test environment", () => {
  const env = sharedEnv();
  const admin = KubeHttp.fromKubeconfig(env.kubeconfigPath);

  it("serves the pinned Kubernetes version", async () => {
    const version = await admin.call("GET", "/version");
    assert.equal(version.gitVersion, KUBERNETES_VERSION);
  });

  it("creates a namespace and a ConfigMap in it without kube-controller-manager", async () => {
    const ns = uniqueName("testenv-cm");
    await ensureNamespace(admin, ns);
    await admin.call("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name: "greeting" },
      data: { hello: "world" },
    });
    const cm = await admin.call("GET", `/api/v1/namespaces/${ns}/configmaps/greeting`);
    assert.equal(cm.data.hello, "world");
  });

  it("logs a ServiceAccount into OpenBao through Kubernetes auth, checking the audience", async () => {
    const ns = uniqueName("testenv-auth");
    const mount = uniqueName("k8s");
    await ensureNamespace(admin, ns);
    await ensureServiceAccount(admin, ns, "app");
    await configureKubernetesAuth(env.bao, env, {
      mount,
      role: "app",
      serviceAccount: "app",
      namespace: ns,
      audience: "vault",
      policies: ["app-read"],
      policyHcl: { "app-read": 'path "secret/data/app/*" { capabilities = ["read"] }' },
      ttl: "10m",
    });

    const good = await requestServiceAccountToken(admin, {
      namespace: ns,
      serviceAccount: "app",
      audiences: ["vault"],
    });
    const login = await kubernetesLogin(env.bao, { mount, role: "app", jwt: good });
    assert.equal(login.ok, true, `login refused: ${login.errors?.join("; ")}`);
    assert.ok(login.policies?.includes("app-read"));

    const wrongAudience = await requestServiceAccountToken(admin, {
      namespace: ns,
      serviceAccount: "app",
      audiences: ["not-vault"],
    });
    const refused = await kubernetesLogin(env.bao, { mount, role: "app", jwt: wrongAudience });
    assert.equal(refused.ok, false);
    assert.ok(refused.status >= 400 && refused.status < 500, `status ${refused.status}`);
  });

  it("writes and reads KV v2 in the dev OpenBao", async () => {
    const key = uniqueName("kv");
    await baoCall(env.bao.addr, env.bao.rootToken, "POST", `secret/data/${key}`, { data: { answer: "42" } });
    const read = await baoCall(env.bao.addr, env.bao.rootToken, "GET", `secret/data/${key}`);
    assert.equal(read.data.data.answer, "42");
    assert.equal(read.data.metadata.version, 1);
  });
});

// Stopping and restarting servers would disturb other test files, so these get private ones.
describe("private control plane and OpenBao", () => {
  let cp: ControlPlane;
  let bao: DevOpenBao;
  let auditFile: string;

  before(async () => {
    cp = await startControlPlane();
    auditFile = join(cp.dir, "audit.log");
    bao = await startDevOpenBao({ version: "2.6.2", auditFile });
  });

  after(async () => {
    await cp?.stop();
    await bao?.stop();
  });

  it("keeps data across an API server restart on the same address", async () => {
    const admin = KubeHttp.fromKubeconfig(cp.kubeconfigPath);
    await ensureNamespace(admin, "survivor");
    await cp.stopApiServer();
    await assert.rejects(admin.request("GET", "/api/v1/namespaces/survivor", undefined, 1000));
    await cp.startApiServer();
    const ns = await admin.call("GET", "/api/v1/namespaces/survivor");
    assert.equal(ns.metadata.name, "survivor");
  });

  it("gives direct etcd access: a deleted key disappears, a compaction expires old versions", async () => {
    const admin = KubeHttp.fromKubeconfig(cp.kubeconfigPath);
    await ensureNamespace(admin, "etcd-direct");
    const created = await admin.call("POST", "/api/v1/namespaces/etcd-direct/configmaps", {
      metadata: { name: "gone" },
    });
    await cp.etcd.deleteKey("/registry/configmaps/etcd-direct/gone");
    assert.equal((await admin.request("GET", "/api/v1/namespaces/etcd-direct/configmaps/gone")).status, 404);

    await cp.etcd.compact();
    // Asked straight from etcd: the API server's watch cache may still answer for old versions.
    const old = await fetch(`${cp.etcd.url}/v3/kv/range`, {
      method: "POST",
      body: JSON.stringify({
        key: Buffer.from("/registry/").toString("base64"),
        revision: created.metadata.resourceVersion,
      }),
    });
    assert.match(await old.text(), /compacted/);
  });

  it("authenticates a ServiceAccount token kubeconfig and applies RBAC to it", async () => {
    const admin = KubeHttp.fromKubeconfig(cp.kubeconfigPath);
    await ensureNamespace(admin, "rbac");
    await ensureServiceAccount(admin, "rbac", "reader");
    await admin.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/rbac/roles", {
      metadata: { name: "configmap-reader" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }],
    });
    await admin.call("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/rbac/rolebindings", {
      metadata: { name: "reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "configmap-reader" },
      subjects: [{ kind: "ServiceAccount", name: "reader", namespace: "rbac" }],
    });
    const token = await requestServiceAccountToken(admin, { namespace: "rbac", serviceAccount: "reader" });
    const reader = KubeHttp.fromKubeconfig(await cp.writeKubeconfigFor({ name: "reader", token }));
    assert.equal((await reader.request("GET", "/api/v1/namespaces/rbac/configmaps")).status, 200);
    assert.equal((await reader.request("GET", "/api/v1/namespaces/rbac/secrets")).status, 403);
  });

  it("runs controllers once kube-controller-manager is started", async () => {
    await cp.startControllerManager(["serviceaccount", "deployment", "replicaset", "garbagecollector"]);
    const admin = KubeHttp.fromKubeconfig(cp.kubeconfigPath);
    await ensureNamespace(admin, "workloads");
    await admin.call("POST", "/apis/apps/v1/namespaces/workloads/deployments", {
      metadata: { name: "web" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "web", image: "registry.invalid/web:1" }] },
        },
      },
    });
    // Pods need the namespace's default ServiceAccount (serviceaccount controller) and come from a
    // ReplicaSet (deployment controller) through the replicaset controller; nothing schedules them.
    const deadline = Date.now() + 30_000;
    let pods: unknown[] = [];
    while (pods.length < 2 && Date.now() < deadline) {
      pods = (await admin.call("GET", "/api/v1/namespaces/workloads/pods")).items;
      if (pods.length < 2) await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(pods.length, 2);
  });

  it("runs the older pinned OpenBao with a file audit device, and seals, unseals and restarts it", async () => {
    const health = await baoCall(bao.addr, undefined, "GET", "sys/health");
    assert.equal(health.version, "2.6.2");
    await baoCall(bao.addr, bao.rootToken, "POST", "secret/data/x", { data: { v: "1" } });
    assert.match(await readFile(auditFile, "utf8"), /secret\/data\/x/);

    await bao.seal();
    assert.equal((await baoCall(bao.addr, undefined, "GET", "sys/seal-status")).sealed, true);
    await bao.unseal();
    const kept = await baoCall(bao.addr, bao.rootToken, "GET", "secret/data/x");
    assert.equal(kept.data.data.v, "1");

    const addr = bao.addr;
    await bao.restart();
    assert.equal(bao.addr, addr);
    // Dev mode is in memory: a restart starts from nothing but the dev defaults.
    await assert.rejects(baoCall(bao.addr, bao.rootToken, "GET", "secret/data/x"), /404/);
  });

  it("leaves no child process and no bound port after stop()", async () => {
    const pids = [...cp.pids(), bao.pid()!];
    const ports = [new URL(cp.server).port, new URL(bao.addr).port].map(Number);
    assert.ok(pids.every(isAlive));
    await cp.stop();
    await bao.stop();
    assert.deepEqual(pids.filter(isAlive), []);
    assert.deepEqual(liveChildren(), []);
    for (const port of ports) assert.equal(await portIsFree(port), true, `port ${port} still bound`);
  });
});
