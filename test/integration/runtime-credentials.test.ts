import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { KubeClient } from "../../src/runtime/client.js";
import {
  credentialsFromKubeconfig,
  inClusterCredentials,
  readKubeconfigFiles,
} from "../../src/runtime/credentials/index.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { serviceAccountToken, whoAmI } from "../support/whoami.js";

const run = promisify(execFile);
const WHOAMI = fileURLToPath(new URL("../fixtures/whoami.js", import.meta.url));

/** Runs the whoami fixture in a fresh process; BLOCK_CLIENT_NODE makes importing the library fail. */
async function whoAmIInChild(kubeconfig: string, blockClientNode: boolean): Promise<string> {
  const { stdout } = await run(process.execPath, [WHOAMI, kubeconfig], {
    env: { ...process.env, BLOCK_CLIENT_NODE: blockClientNode ? "1" : "0" },
    timeout: 60_000,
  });
  return stdout.trim();
}

describe("credentials against a real kube-apiserver", () => {
  const env = sharedEnv();
  let admin: KubeClient;
  let adminName: string;
  let ns: string;
  let dir: string;
  let tokenA: string;
  let tokenB: string;
  const clients: KubeClient[] = [];
  const open = (c: KubeClient) => {
    clients.push(c);
    return c;
  };

  /** Writes a kubeconfig for the shared server; `user` is the user entry's fields. */
  async function kubeconfig(file: string, user: Record<string, unknown>): Promise<string> {
    const path = join(dir, file);
    const doc = {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: env.server, "certificate-authority": "ca.pem" } }],
      users: [{ name: "u", user }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    };
    await writeFile(path, JSON.stringify(doc), { mode: 0o600 });
    return path;
  }

  /** Replaces a file the way kubelet does: a new file renamed over the old one. */
  async function replaceFile(path: string, content: string): Promise<void> {
    await writeFile(`${path}.new`, content);
    await rename(`${path}.new`, path);
  }

  before(async () => {
    admin = clientFor(env.kubeconfigPath);
    adminName = await whoAmI(admin);
    ns = await freshNamespace(admin, "rt-creds");
    tokenA = await serviceAccountToken(admin, ns, "sa-a");
    tokenB = await serviceAccountToken(admin, ns, "sa-b");
    dir = await mkdtemp(join(tmpdir(), "creds-"));
    await writeFile(join(dir, "ca.pem"), env.caPem);
    // The admin's own certificate and key, moved from inline data into files.
    const adminUser = readKubeconfigFiles([env.kubeconfigPath]).users.values().next().value!.fields;
    const pem = (field: string) => Buffer.from(String(adminUser[field]), "base64").toString("utf8");
    await writeFile(join(dir, "client.crt"), pem("client-certificate-data"));
    await writeFile(join(dir, "client.key"), pem("client-key-data"), { mode: 0o600 });
    await kubeconfig("certs.yaml", {
      "client-certificate": "client.crt",
      "client-key": "client.key",
    });
  });
  after(async () => {
    for (const c of clients) c.close();
    admin.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a client certificate and key from files (paths relative to the kubeconfig) authenticate", async () => {
    const path = join(dir, "certs.yaml");
    const client = open(new KubeClient(credentialsFromKubeconfig(readKubeconfigFiles([path]))));
    assert.notEqual(adminName, "system:anonymous");
    assert.equal(await whoAmI(client), adminName);
  });

  it("a bearer token authenticates as its ServiceAccount", async () => {
    const path = await kubeconfig("token.yaml", { token: tokenA });
    const client = open(new KubeClient(credentialsFromKubeconfig(readKubeconfigFiles([path]))));
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-a`);
  });

  it("a rotated tokenFile is picked up by the same client, without a restart", async () => {
    const tokenFile = join(dir, "rotating-token");
    await writeFile(tokenFile, tokenA);
    const path = await kubeconfig("tokenfile.yaml", { tokenFile: "rotating-token" });
    const creds = credentialsFromKubeconfig(readKubeconfigFiles([path]), { checkEveryMs: 0 });
    const client = open(new KubeClient(creds));
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-a`);
    await replaceFile(tokenFile, tokenB);
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-b`);
    // A file caught empty mid-rotation keeps the last good token instead of sending none.
    await writeFile(tokenFile, "");
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-b`);
  });

  it("in-cluster: service host/port from the environment, token and CA from the mounted folder", async () => {
    const mount = join(dir, "serviceaccount");
    await mkdir(mount);
    await writeFile(join(mount, "token"), tokenA);
    await writeFile(join(mount, "ca.crt"), env.caPem);
    const url = new URL(env.server);
    const creds = inClusterCredentials({
      env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
      dir: mount,
      checkEveryMs: 0,
    });
    assert.equal(creds.server, `https://${url.hostname}:${url.port}`);
    const client = open(new KubeClient(creds));
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-a`);
    await replaceFile(join(mount, "token"), tokenB);
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-b`);
  });

  it("an exec plugin authenticates, through @kubernetes/client-node loaded on demand", async () => {
    const plugin = join(dir, "plugin.mjs");
    await writeFile(
      plugin,
      `import { readFileSync } from "node:fs";
const token = readFileSync(process.env.PLUGIN_TOKEN_FILE, "utf8").trim();
process.stdout.write(JSON.stringify({
  apiVersion: "client.authentication.k8s.io/v1",
  kind: "ExecCredential",
  status: { token, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() },
}));
`,
    );
    await writeFile(join(dir, "plugin-token"), tokenA);
    const path = await kubeconfig("exec.yaml", {
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: [plugin],
        env: [{ name: "PLUGIN_TOKEN_FILE", value: join(dir, "plugin-token") }],
        interactiveMode: "Never",
      },
    });
    const client = open(new KubeClient(credentialsFromKubeconfig(readKubeconfigFiles([path]))));
    assert.equal(await whoAmI(client), `system:serviceaccount:${ns}:sa-a`);
    // In a fresh process that cannot import the library, the exec path fails on exactly that import...
    await assert.rejects(whoAmIInChild(path, true), /blocked import of @kubernetes\/client-node/);
    // ...works when it can...
    assert.equal(await whoAmIInChild(path, false), `system:serviceaccount:${ns}:sa-a`);
  });

  it("certificates and tokens never load @kubernetes/client-node", async () => {
    // ...and the certificate and token paths work in a process where importing it throws.
    const certs = join(dir, "certs.yaml");
    assert.equal(await whoAmIInChild(certs, true), adminName);
    const token = await kubeconfig("token-child.yaml", { token: tokenB });
    assert.equal(await whoAmIInChild(token, true), `system:serviceaccount:${ns}:sa-b`);
  });
});
