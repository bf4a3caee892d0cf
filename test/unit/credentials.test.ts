import assert from "node:assert/strict";
import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ClientNodeCredentials } from "../../src/runtime/credentials/client-node.js";
import {
  credentialsFromKubeconfig,
  inClusterCredentials,
  kubeconfigFromDocument,
  loadCredentials,
  readKubeconfigFiles,
} from "../../src/runtime/credentials/index.js";
import { WatchedFile } from "../../src/runtime/credentials/watched-file.js";

const PEM_CA = "-----BEGIN CERTIFICATE-----\nMIIBca\n-----END CERTIFICATE-----\n";
const PEM_CERT = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n";
const PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEsecretkeymaterial\n-----END PRIVATE KEY-----\n";
const b64 = (s: string) => Buffer.from(s).toString("base64");

const dir = mkdtempSync(join(tmpdir(), "creds-unit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function doc(cluster: Record<string, unknown>, user?: Record<string, unknown>, extra: object = {}) {
  return {
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443", ...cluster } }],
    users: user ? [{ name: "u", user }] : [],
    contexts: [{ name: "x", context: { cluster: "c", ...(user ? { user: "u" } : {}) } }],
    "current-context": "x",
    ...extra,
  };
}
const fromDoc = (d: unknown, opts = {}) =>
  credentialsFromKubeconfig(kubeconfigFromDocument(d, "/k/config"), opts);
const authOf = async (d: unknown) => fromDoc(d).requestAuth();

describe("kubeconfig credentials", () => {
  it("client certificate and key data, CA data, tls-server-name", async () => {
    const auth = await authOf(
      doc(
        { "certificate-authority-data": b64(PEM_CA), "tls-server-name": "kubernetes" },
        { "client-certificate-data": b64(PEM_CERT), "client-key-data": b64(PEM_KEY) },
      ),
    );
    assert.equal(String(auth.ca), PEM_CA);
    assert.equal(String(auth.cert), PEM_CERT);
    assert.equal(String(auth.key), PEM_KEY);
    assert.equal(auth.servername, "kubernetes");
    assert.equal(auth.rejectUnauthorized, undefined);
    assert.deepEqual(auth.headers, {});
  });

  it("a token becomes a bearer Authorization header; insecure-skip-tls-verify turns verification off", async () => {
    const auth = await authOf(doc({ "insecure-skip-tls-verify": true }, { token: "abc.def" }));
    assert.deepEqual(auth.headers, { Authorization: "Bearer abc.def" });
    assert.equal(auth.rejectUnauthorized, false);
  });

  it("no user at all is anonymous, not an error", async () => {
    assert.deepEqual((await authOf(doc({}))).headers, {});
  });

  it("files are read relative to the kubeconfig's folder", async () => {
    const sub = mkdtempSync(join(dir, "rel-"));
    writeFileSync(join(sub, "ca.pem"), PEM_CA);
    writeFileSync(join(sub, "c.crt"), PEM_CERT);
    writeFileSync(join(sub, "c.key"), PEM_KEY);
    writeFileSync(join(sub, "tok"), "from-file\n");
    const path = join(sub, "config");
    writeFileSync(
      path,
      JSON.stringify(
        doc(
          { "certificate-authority": "ca.pem" },
          { "client-certificate": "c.crt", "client-key": "c.key", tokenFile: "tok" },
        ),
      ),
    );
    const creds = loadCredentials(path);
    const auth = await creds.requestAuth();
    assert.equal(String(auth.ca), PEM_CA);
    assert.equal(String(auth.cert), PEM_CERT);
    assert.equal(String(auth.key), PEM_KEY);
    assert.deepEqual(auth.headers, { Authorization: "Bearer from-file" });
    assert.equal(creds.server, "https://127.0.0.1:6443");
    assert.match(creds.source, /context x/);
  });

  it("*-data wins over the file form, and tokenFile wins over token (as in client-go)", async () => {
    const tok = join(dir, "tokenfile-wins");
    writeFileSync(tok, "file-token");
    const auth = await authOf(
      doc(
        { "certificate-authority": "/does/not/exist", "certificate-authority-data": b64(PEM_CA) },
        { token: "inline-token", tokenFile: tok },
      ),
    );
    assert.equal(String(auth.ca), PEM_CA);
    assert.deepEqual(auth.headers, { Authorization: "Bearer file-token" });
  });

  it("a context other than current-context can be chosen", () => {
    const d = doc({});
    d.clusters.push({ name: "other", cluster: { server: "https://10.0.0.1:443" } });
    d.contexts.push({ name: "y", context: { cluster: "other" } });
    assert.equal(fromDoc(d, { context: "y" }).server, "https://10.0.0.1:443");
  });

  it("exec plugins and auth providers go to @kubernetes/client-node", () => {
    const exec = fromDoc(
      doc({}, { exec: { command: "kubelogin", apiVersion: "client.authentication.k8s.io/v1" } }),
    );
    assert.ok(exec instanceof ClientNodeCredentials);
    const provider = fromDoc(doc({}, { "auth-provider": { name: "oidc", config: {} } }));
    assert.ok(provider instanceof ClientNodeCredentials);
  });

  const bad: [string, unknown, RegExp][] = [
    ["no current-context", { ...doc({}), "current-context": undefined }, /current-context is not set/],
    ["an unknown context", { ...doc({}), "current-context": "nope" }, /context "nope" is not defined/],
    [
      "a context naming a missing cluster",
      { ...doc({}), contexts: [{ name: "x", context: { cluster: "gone" } }] },
      /context "x"\.cluster: cluster "gone" is not defined/,
    ],
    [
      "a context naming a missing user",
      { ...doc({}), contexts: [{ name: "x", context: { cluster: "c", user: "ghost" } }] },
      /context "x"\.user: user "ghost" is not defined/,
    ],
    ["no server", { ...doc({}), clusters: [{ name: "c", cluster: {} }] }, /cluster "c"\.server is not set/],
    [
      "a server that is not a URL",
      { ...doc({}), clusters: [{ name: "c", cluster: { server: "localhost:6443" } }] },
      /cluster "c"\.server: "localhost:6443" must start with https:\/\/ or http:\/\//,
    ],
    [
      "a certificate without its key",
      doc({}, { "client-certificate-data": b64(PEM_CERT) }),
      /user "u": client-certificate is set without client-key/,
    ],
    [
      "a key without its certificate",
      doc({}, { "client-key-data": b64(PEM_KEY) }),
      /user "u": client-key is set without client-certificate/,
    ],
    [
      "CA data that is not base64 PEM",
      doc({ "certificate-authority-data": "not base64!" }),
      /cluster "c"\.certificate-authority-data is not base64-encoded PEM/,
    ],
    [
      "a CA file that does not exist",
      doc({ "certificate-authority": "/no/such/ca.pem" }),
      /cluster "c"\.certificate-authority: cannot read the certificate authority \/no\/such\/ca\.pem: ENOENT/,
    ],
    [
      "insecure-skip-tls-verify with a CA",
      doc({ "insecure-skip-tls-verify": true, "certificate-authority-data": b64(PEM_CA) }),
      /insecure-skip-tls-verify cannot be combined with a certificate authority/,
    ],
    [
      "insecure-skip-tls-verify that is not a boolean",
      doc({ "insecure-skip-tls-verify": "yes" }),
      /cluster "c"\.insecure-skip-tls-verify must be true or false/,
    ],
    [
      "a proxy",
      doc({ "proxy-url": "http://proxy:3128" }),
      /cluster "c"\.proxy-url: proxies are not supported/,
    ],
    ["impersonation", doc({}, { as: "admin" }), /user "u"\.as: impersonation is not supported/],
    ["basic auth", doc({}, { username: "a", password: "b" }), /user "u": username\/password \(basic auth\)/],
    ["a token that is not a string", doc({}, { token: 42 }), /user "u"\.token must be a string/],
    ["clusters that are not a list", { ...doc({}), clusters: { c: {} } }, /clusters must be a list/],
    [
      "an entry without a name",
      { ...doc({}), users: [{ user: {} }] },
      /users\[0\]\.name must be a non-empty string/,
    ],
  ];
  for (const [what, d, message] of bad) {
    it(`rejects ${what}, naming the field`, () => {
      assert.throws(
        () => fromDoc(d),
        (e: Error) => {
          assert.match(e.message, message);
          assert.match(e.message, /^kubeconfig \/k\/config/);
          return true;
        },
      );
    });
  }

  it("never quotes key material in an error", () => {
    const secret = "c2VjcmV0LWtleS1tYXRlcmlhbA==";
    assert.throws(
      () => fromDoc(doc({}, { "client-certificate-data": b64(PEM_CERT), "client-key-data": secret })),
      (e: Error) =>
        !e.message.includes(secret) && /client-key-data is not base64-encoded PEM/.test(e.message),
    );
  });

  it("merges several files like $KUBECONFIG: the first to define a name or current-context wins", () => {
    const a = join(dir, "a.yaml");
    const b = join(dir, "b.yaml");
    writeFileSync(
      a,
      `clusters:\n- name: c\n  cluster: { server: "https://a.example:1" }\ncontexts:\n- name: x\n  context: { cluster: c }\n`,
    );
    writeFileSync(b, JSON.stringify(doc({})).replace("127.0.0.1:6443", "b.example:2"));
    const merged = readKubeconfigFiles([a, b]);
    assert.equal(merged.currentContext, "x");
    assert.equal(credentialsFromKubeconfig(merged).server, "https://a.example:1");
  });

  it("a file that is not YAML names the file", () => {
    const f = join(dir, "broken.yaml");
    writeFileSync(f, "clusters: [\n");
    assert.throws(() => readKubeconfigFiles([f]), new RegExp(`kubeconfig ${f}: not valid YAML`));
    assert.throws(() => readKubeconfigFiles([join(dir, "absent")]), /cannot read it: ENOENT/);
  });

  it("KUBECONFIG naming only missing files is an error, not a silent fallback", () => {
    const saved = process.env["KUBECONFIG"];
    process.env["KUBECONFIG"] = join(dir, "missing-1");
    try {
      assert.throws(() => loadCredentials(), /KUBECONFIG names no file that exists/);
    } finally {
      if (saved === undefined) delete process.env["KUBECONFIG"];
      else process.env["KUBECONFIG"] = saved;
    }
  });
});

describe("in-cluster credentials", () => {
  const mount = mkdtempSync(join(dir, "sa-"));
  writeFileSync(join(mount, "token"), "sa-token\n");
  writeFileSync(join(mount, "ca.crt"), PEM_CA);

  it("reads the service address from the environment and token and CA from the folder", async () => {
    const creds = inClusterCredentials({
      env: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
      dir: mount,
    });
    assert.equal(creds.server, "https://10.96.0.1:443");
    const auth = await creds.requestAuth();
    assert.deepEqual(auth.headers, { Authorization: "Bearer sa-token" });
    assert.equal(String(auth.ca), PEM_CA);
  });

  it("brackets an IPv6 service address", () => {
    const creds = inClusterCredentials({
      env: { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
      dir: mount,
    });
    assert.equal(creds.server, "https://[fd00::1]:443");
  });

  it("says what is missing", () => {
    assert.throws(
      () => inClusterCredentials({ env: { KUBERNETES_SERVICE_HOST: "10.96.0.1" }, dir: mount }),
      /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set/,
    );
    assert.throws(
      () =>
        inClusterCredentials({
          env: { KUBERNETES_SERVICE_HOST: "h", KUBERNETES_SERVICE_PORT: "https" },
          dir: mount,
        }),
      /KUBERNETES_SERVICE_PORT "https" is not a port number/,
    );
    assert.throws(
      () =>
        inClusterCredentials({
          env: { KUBERNETES_SERVICE_HOST: "h", KUBERNETES_SERVICE_PORT: "443" },
          dir: join(dir, "nowhere"),
        }),
      /cannot read the ServiceAccount token .*nowhere\/token: ENOENT/,
    );
  });
});

describe("a watched credential file", () => {
  it("is re-read when replaced, keeps the last good content when emptied or removed", async () => {
    const f = join(dir, "watched");
    writeFileSync(f, "one");
    const w = new WatchedFile(f, "token file", 0);
    writeFileSync(`${f}.new`, "two");
    renameSync(`${f}.new`, f);
    assert.equal(await w.refresh(), true);
    assert.equal(String(w.value), "two");
    writeFileSync(f, "");
    assert.equal(await w.refresh(), false);
    assert.equal(String(w.value), "two");
    unlinkSync(f);
    assert.equal(await w.refresh(), false);
    assert.equal(String(w.value), "two");
  });

  it("is not looked at again within its check interval", async () => {
    const f = join(dir, "throttled");
    writeFileSync(f, "one");
    const w = new WatchedFile(f, "token file", 3_600_000);
    writeFileSync(f, "two-changed");
    assert.equal(await w.refresh(), false);
    assert.equal(String(w.value), "one");
  });

  it("a missing or empty file at start is an error naming it", () => {
    assert.throws(
      () => new WatchedFile(join(dir, "nope"), "client key"),
      /cannot read the client key .*nope: ENOENT/,
    );
    const empty = join(dir, "empty");
    writeFileSync(empty, "");
    assert.throws(() => new WatchedFile(empty, "token file"), /the token file .*empty is empty/);
  });
});
