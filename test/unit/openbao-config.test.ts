import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { Component } from "../../src/targets/openbao/identity.js";
import {
  acmeCARootPem,
  ConfigError,
  configEnv,
  configHash,
  inlineSealSecrets,
  renderConfig,
  renderSelfInitRequests,
} from "../../src/targets/openbao/workload/config/index.js";
import { GOLDEN_CASES } from "../fixtures/openbao/golden/cases.js";
import { type Entry, find, one, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";

const GOLDEN_DIR = fileURLToPath(new URL("../../../test/fixtures/openbao/golden/", import.meta.url));
const UPDATE = process.env["UPDATE_GOLDEN"] === "1";

// biome-ignore lint/suspicious/noExplicitAny: tests spell out spec fields freely
function cluster(spec: Record<string, any> = {}, name = "demo", namespace = "ns1"): OpenBaoCluster {
  return {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name, namespace },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  } as unknown as OpenBaoCluster;
}

function compareGolden(file: string, actual: string): void {
  const path = join(GOLDEN_DIR, file);
  if (UPDATE) writeFileSync(path, actual);
  assert.equal(actual, readFileSync(path, "utf8"), `${file} differs; UPDATE_GOLDEN=1 regenerates it`);
}

function stanza(entries: Entry[], key: string, ...labels: string[]): Entry[] {
  return one(entries, key, ...labels).value as Entry[];
}

function attr(entries: Entry[], key: string): unknown {
  return plain(one(entries, key).value);
}

describe("config.hcl golden files", () => {
  for (const c of GOLDEN_CASES) {
    it(`${c.name} renders byte for byte as ${c.name}.hcl`, () => {
      compareGolden(`${c.name}.hcl`, renderConfig(c.cluster, c.opts));
      const requests = renderSelfInitRequests(c.cluster);
      if (requests !== "") compareGolden(`${c.name}.requests.hcl`, requests);
    });
  }
});

describe("config.hcl structure", () => {
  it("joins every voter over verified TLS and names the pod it expects", () => {
    const doc = parseHcl(renderConfig(cluster({ replicas: 3 })));
    const storage = stanza(doc, "storage", "raft");
    assert.equal(attr(storage, "path"), "/openbao/data");
    const joins = find(storage, "retry_join").map((e) => plain(e.value));
    assert.deepEqual(
      joins,
      [0, 1, 2].map((i) => ({
        leader_api_addr: `https://demo-${i}.demo.ns1.svc:8200`,
        leader_ca_cert_file: "/openbao/tls/ca.crt",
        leader_tls_servername: `demo-${i}.demo.ns1.svc`,
      })),
    );
    assert.equal(find(storage, "retry_join_as_non_voter").length, 0);
    const listener = plain(one(doc, "listener", "tcp").value);
    assert.deepEqual(listener, {
      address: "0.0.0.0:8200",
      cluster_address: "0.0.0.0:8201",
      tls_cert_file: "/openbao/tls/tls.crt",
      tls_key_file: "/openbao/tls/tls.key",
      tls_client_ca_file: "/openbao/tls/ca.crt",
    });
    assert.deepEqual(plain(one(doc, "seal", "static").value), {
      current_key_id: "operator-managed-1",
      current_key: "file:///openbao/unseal/key",
    });
    assert.deepEqual(plain(one(doc, "service_registration", "kubernetes").value), { namespace: "ns1" });
    // Per-pod values come from the environment, never from the shared file.
    for (const perPod of ["api_addr", "cluster_addr", "node_id"]) assert.equal(find(doc, perPod).length, 0);
  });

  it("renders the peer list it is given, so blue-green can join another revision", () => {
    const doc = parseHcl(renderConfig(cluster(), { peers: ["a.example", "b.example"], revision: "green-1" }));
    const joins = find(stanza(doc, "storage", "raft"), "retry_join");
    assert.deepEqual(
      joins.map((j) => attr(j.value as Entry[], "leader_api_addr")),
      ["https://a.example:8200", "https://b.example:8200"],
    );
  });

  it("joins read replicas as non-voters through the voters", () => {
    const c = cluster({ replicas: 3, readReplicas: { replicas: 2 } });
    const doc = parseHcl(renderConfig(c, { component: Component.ReadReplica }));
    const storage = stanza(doc, "storage", "raft");
    assert.equal(attr(storage, "retry_join_as_non_voter"), true);
    assert.equal(find(storage, "retry_join").length, 3);
    assert.notEqual(
      configHash(renderConfig(c, { component: Component.ReadReplica })),
      configHash(renderConfig(c)),
    );
  });

  it("ACME: listener options and cache path, no certificate files, peers verified by the ACME name", () => {
    const c = cluster({
      tls: { mode: "ACME", acme: { directoryURL: "https://ca.test/dir", domain: "bao.test" } },
    });
    const doc = parseHcl(renderConfig(c));
    const listener = plain(one(doc, "listener", "tcp").value) as Record<string, unknown>;
    assert.equal(listener["tls_acme_ca_directory"], "https://ca.test/dir");
    assert.deepEqual(listener["tls_acme_domains"], ["bao.test"]);
    assert.equal(listener["tls_acme_cache_path"], "/openbao/acme-cache");
    assert.equal(listener["tls_cert_file"], undefined);
    const join0 = plain(find(stanza(doc, "storage", "raft"), "retry_join")[0]!.value) as Record<
      string,
      unknown
    >;
    assert.equal(join0["leader_tls_servername"], "bao.test");
    assert.equal(join0["leader_ca_cert_file"], undefined);
    // Neither domain nor domains: upstream's default, the ACME Service's name.
    const bare = parseHcl(
      renderConfig(cluster({ tls: { mode: "ACME", acme: { directoryURL: "https://ca.test/dir" } } })),
    );
    const bareListener = plain(one(bare, "listener", "tcp").value) as Record<string, unknown>;
    assert.deepEqual(bareListener["tls_acme_domains"], ["demo-acme.ns1.svc"]);
    const bareJoin = plain(find(stanza(bare, "storage", "raft"), "retry_join")[0]!.value) as Record<
      string,
      unknown
    >;
    assert.equal(bareJoin["leader_tls_servername"], "demo-acme.ns1.svc");
  });

  it("ACME CA root: PEM text goes to the mounted bundle file, a path is used as is", () => {
    const acme = { mode: "ACME", acme: { directoryURL: "https://ca.test/dir", domains: ["bao.test"] } };
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const withPem = cluster({ tls: acme, configuration: { acmeCARoot: pem } });
    const listener = (c: OpenBaoCluster) =>
      plain(one(parseHcl(renderConfig(c)), "listener", "tcp").value) as Record<string, unknown>;
    assert.equal(listener(withPem)["tls_acme_ca_root"], "/openbao/acme-ca/ca.crt");
    assert.equal(acmeCARootPem(withPem), pem);
    const withPath = cluster({ tls: acme, configuration: { acmeCARoot: "/etc/ssl/acme.pem" } });
    assert.equal(listener(withPath)["tls_acme_ca_root"], "/etc/ssl/acme.pem");
    assert.equal(acmeCARootPem(withPath), undefined);
    assert.throws(
      () => renderConfig(cluster({ tls: acme, configuration: { acmeCARoot: "relative.pem" } })),
      /configuration\.acmeCARoot: must be PEM text or an absolute path/,
    );
  });

  it("TLS disabled: plain HTTP listener and peers, no CA", () => {
    const doc = parseHcl(renderConfig(cluster({ tls: { enabled: false } })));
    assert.equal(attr(stanza(doc, "listener", "tcp"), "tls_disable"), true);
    const join0 = plain(find(stanza(doc, "storage", "raft"), "retry_join")[0]!.value) as Record<
      string,
      unknown
    >;
    assert.match(String(join0["leader_api_addr"]), /^http:\/\//);
    assert.equal(join0["leader_ca_cert_file"], undefined);
    const env = configEnv(cluster({ tls: { enabled: false } }));
    assert.match(env.find((e) => e.name === "BAO_API_ADDR")!.value!, /^http:\/\//);
  });

  it("maps every non-static seal type to OpenBao's own setting names", () => {
    const cases: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
      [
        "awskms",
        "awskms",
        { region: "eu-west-1", kmsKeyID: "k", endpoint: "https://kms.test" },
        { region: "eu-west-1", kms_key_id: "k", endpoint: "https://kms.test" },
      ],
      [
        "gcpckms",
        "gcpCloudKMS",
        { project: "p", region: "global", keyRing: "r", cryptoKey: "c", credentials: "/creds.json" },
        { project: "p", region: "global", key_ring: "r", crypto_key: "c", credentials: "/creds.json" },
      ],
      [
        "azurekeyvault",
        "azureKeyVault",
        { vaultName: "v", keyName: "k", tenantID: "t" },
        { vault_name: "v", key_name: "k", tenant_id: "t" },
      ],
      [
        "kmip",
        "kmip",
        {
          address: "kmip.test:5696",
          caCert: "/ca",
          certificate: "/c",
          key: "/k",
          tlsServerName: "kmip.test",
        },
        {
          endpoint: "kmip.test:5696",
          ca_cert: "/ca",
          client_cert: "/c",
          client_key: "/k",
          server_name: "kmip.test",
        },
      ],
      [
        "ocikms",
        "ocikms",
        { keyID: "k", cryptoEndpoint: "https://c", managementEndpoint: "https://m", authType: "apikey" },
        {
          key_id: "k",
          crypto_endpoint: "https://c",
          management_endpoint: "https://m",
          auth_type_api_key: true,
        },
      ],
      [
        "pkcs11",
        "pkcs11",
        { lib: "/usr/lib/softhsm.so", slot: "0", keyLabel: "bao", rsaOAEPHash: "sha256" },
        { lib: "/usr/lib/softhsm.so", slot: "0", key_label: "bao", rsa_oaep_hash: "sha256" },
      ],
      [
        "transit",
        "transit",
        { address: "https://t", key_name: "k" },
        { address: "https://t", key_name: "k" },
      ],
    ];
    for (const [type, field, given, expected] of cases) {
      const doc = parseHcl(renderConfig(cluster({ unseal: { type, [field]: given } })));
      assert.deepEqual(plain(one(doc, "seal", type).value), expected, type);
      assert.equal(find(doc, "seal").length, 1);
    }
    const kms = parseHcl(
      renderConfig(cluster({ unseal: { type: "kms", kms: { name: "my-hsm", lib: "/x.so" } } })),
    );
    assert.deepEqual(plain(one(kms, "seal", "my-hsm").value), { lib: "/x.so" });
  });

  it("refuses seal settings OpenBao does not have, naming the field", () => {
    assert.throws(
      () => renderConfig(cluster({ unseal: { type: "pkcs11", pkcs11: { lib: "/l", generateKey: true } } })),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.field === "unseal.pkcs11.generateKey" &&
        /not supported by OpenBao's pkcs11 seal/.test(e.message),
    );
    assert.throws(
      () => renderConfig(cluster({ unseal: { type: "awskms", awskms: { region: "r", kmsKeyId: "typo" } } })),
      /unseal\.awskms\.kmsKeyId: is not a setting of OpenBao's awskms seal/,
    );
    assert.throws(
      () => renderConfig(cluster({ unseal: { type: "transit" } })),
      /unseal\.transit: is required/,
    );
  });

  it("self-init headers and when: OpenBao 2.6 on, header names as written, refusals naming the request", () => {
    const req = (extra: Record<string, unknown>) => ({
      selfInit: { enabled: true, requests: [{ name: "r", operation: "read", path: "sys/health", ...extra }] },
    });
    const text = renderSelfInitRequests(
      cluster({ ...req({ headers: { "X-A": ["1", "2"], b: [] }, when: { eval_type: "bool", x: [1] } }) }),
    );
    const request = stanza(stanza(parseHcl(text), "initialize", "operator"), "request", "r");
    assert.deepEqual(attr(request, "headers"), { "X-A": ["1", "2"], b: [] });
    assert.deepEqual(attr(request, "when"), { eval_type: "bool", x: [1] });
    assert.throws(
      () => renderSelfInitRequests(cluster({ version: "2.5.3", ...req({ when: true }) })),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.field === "selfInit.requests[0].when" &&
        /needs OpenBao 2\.6\.0 or newer; spec\.version is 2\.5\.3/.test(e.message),
    );
    assert.throws(
      () => renderSelfInitRequests(cluster({ version: "2.5.3", ...req({ headers: { a: ["x"] } }) })),
      /selfInit\.requests\[0\]\.headers: needs OpenBao 2\.6\.0/,
    );
    assert.throws(
      () => renderSelfInitRequests(cluster(req({ headers: { " X-A": ["x"] } }))),
      /selfInit\.requests\[0\]\.headers: header name " X-A" is empty or has surrounding blanks/,
    );
    assert.throws(
      () => renderSelfInitRequests(cluster(req({ headers: { a: [7] } }))),
      /selfInit\.requests\[0\]\.headers\.a\[0\]: must be a string/,
    );
    assert.equal(
      renderSelfInitRequests(cluster({ version: "2.5.3", ...req({}) })).includes("headers"),
      false,
      "no headers asked, none rendered, on any release",
    );
  });

  it("lists inline seal secrets without their values, so the workload can keep the config in a Secret", () => {
    const secret = "s3cr3t-token-value";
    const c = cluster({ unseal: { type: "transit", transit: { address: "https://t", token: secret } } });
    assert.deepEqual(inlineSealSecrets(c.spec as never), ["unseal.transit.token"]);
    assert.deepEqual(inlineSealSecrets(cluster().spec as never), []);
    // Errors never carry values.
    const bad = cluster({
      unseal: { type: "transit", transit: { address: "https://t", token: secret, x: secret } },
    });
    assert.throws(
      () => renderConfig(bad),
      (e: unknown) => e instanceof Error && !e.message.includes(secret),
    );
  });

  it("renders audit devices as stanzas with their options", () => {
    const doc = parseHcl(
      renderConfig(
        cluster({
          audit: [
            { type: "file", path: "f", description: "d", fileOptions: { filePath: "/a/log", mode: "0600" } },
            { type: "syslog", path: "s", syslogOptions: { facility: "AUTH", tag: "bao" } },
            {
              type: "http",
              path: "h",
              httpOptions: { uri: "https://siem.test", headers: { "X-A": "1", B: ["2", "3"] } },
            },
          ],
        }),
      ),
    );
    assert.deepEqual(plain(one(doc, "audit", "file", "f").value), {
      description: "d",
      options: { file_path: "/a/log", mode: "0600" },
    });
    assert.deepEqual(plain(one(doc, "audit", "syslog", "s").value), {
      options: { facility: "AUTH", tag: "bao" },
    });
    const http = plain(one(doc, "audit", "http", "h").value) as { options: Record<string, string> };
    assert.deepEqual(JSON.parse(http.options["headers"]!), { "X-A": ["1"], B: ["2", "3"] });
    assert.throws(
      () => renderConfig(cluster({ audit: [{ type: "file", path: "f", syslogOptions: { tag: "x" } }] })),
      /audit\[0\]\.syslogOptions: belongs to audit devices of type syslog/,
    );
    assert.throws(
      () =>
        renderConfig(
          cluster({
            audit: [
              { type: "file", path: "a", fileOptions: { filePath: "x" } },
              { type: "file", path: "a/", fileOptions: { filePath: "y" } },
            ],
          }),
        ),
      /audit\[1\]\.path: is used by another audit device/,
    );
  });

  it("renders telemetry, server settings and declarative plugins", () => {
    const doc = parseHcl(
      renderConfig(
        cluster({
          configuration: {
            logLevel: "warn",
            logging: { format: "json" },
            cacheSize: 1000,
            plugin: { autoDownload: true },
          },
          telemetry: { prometheusRetentionTime: "1h", dogStatsdTags: ["a:b"] },
          plugins: [
            {
              type: "secret",
              name: "aws",
              image: "ghcr.io/openbao/openbao-plugin-secrets-aws",
              version: "v1.0.0",
              binaryName: "openbao-plugin-secrets-aws",
              sha256sum: "a".repeat(64),
            },
          ],
        }),
      ),
    );
    assert.equal(attr(doc, "log_level"), "warn");
    assert.equal(attr(doc, "log_format"), "json");
    assert.equal(attr(doc, "cache_size"), 1000);
    assert.equal(attr(doc, "ui"), true);
    assert.equal(attr(doc, "plugin_directory"), "/openbao/plugins");
    assert.equal(attr(doc, "plugin_auto_download"), true);
    assert.deepEqual(plain(one(doc, "telemetry").value), {
      prometheus_retention_time: "1h",
      dogstatsd_tags: ["a:b"],
    });
    assert.equal(attr(stanza(doc, "plugin", "secret", "aws"), "binary_name"), "openbao-plugin-secrets-aws");
    assert.throws(
      () => renderConfig(cluster({ telemetry: { prometheusRetention: "1h" } })),
      /telemetry\.prometheusRetention: is not a setting/,
    );
  });

  it("self-init: one initialize stanza, requests in order, structured bodies in the API's shape", () => {
    const text = renderSelfInitRequests(
      cluster({
        selfInit: {
          enabled: true,
          requests: [
            {
              name: "a",
              operation: "update",
              path: "sys/mounts/kv",
              secretEngine: { type: "kv", options: { version: 2 } },
            },
            { name: "b", operation: "update", path: "sys/policies/acl/p", policy: { policy: "x" } },
            {
              name: "c",
              operation: "update",
              path: "sys/auth/jwt",
              authMethod: { type: "jwt" },
              allowFailure: true,
            },
            { name: "d", operation: "update", path: "k/v", data: { "odd key": [1, { x: true }] } },
          ],
        },
      }),
    );
    const doc = parseHcl(text);
    assert.equal(doc.length, 1);
    const init = stanza(doc, "initialize", "operator");
    assert.deepEqual(
      init.map((r) => r.labels[0]),
      ["a", "b", "c", "d"],
    );
    assert.deepEqual(plain(one(init, "request", "a").value), {
      operation: "update",
      path: "sys/mounts/kv",
      data: { type: "kv", options: { version: "2" } },
    });
    assert.equal(attr(stanza(init, "request", "c"), "allow_failure"), true);
    assert.deepEqual(plain(one(stanza(init, "request", "d"), "data").value), { "odd key": [1, { x: true }] });
    assert.equal(renderSelfInitRequests(cluster({ selfInit: { enabled: false, requests: [] } })), "");
    assert.throws(
      () =>
        renderSelfInitRequests(
          cluster({
            selfInit: {
              enabled: true,
              requests: [{ name: "x", operation: "update", path: "p", data: {}, policy: { policy: "p" } }],
            },
          }),
        ),
      /selfInit\.requests\[0\]: give only one request body; found data and policy/,
    );
    assert.throws(
      () =>
        renderSelfInitRequests(
          cluster({
            selfInit: {
              enabled: true,
              requests: [{ name: "x", operation: "delete", path: "sys/audit/f" }],
            },
          }),
        ),
      /selfInit\.requests\[0\]\.path: OpenBao refuses audit devices changed through its API/,
    );
    assert.throws(
      () =>
        renderSelfInitRequests(
          cluster({
            selfInit: {
              enabled: true,
              requests: [{ name: "x", operation: "update", path: "p", data: { a: null } }],
            },
          }),
        ),
      /selfInit\.requests\[0\]\.data\.a: null has no equivalent/,
    );
  });

  it("self-init requests that enable audit devices become declarative audit stanzas", () => {
    const c = cluster({
      selfInit: {
        enabled: true,
        requests: [
          {
            name: "stdout_audit",
            operation: "update",
            path: "sys/audit/stdout",
            auditDevice: { type: "file", description: "d", fileOptions: { filePath: "/dev/stdout" } },
          },
          {
            name: "raw",
            operation: "update",
            path: "sys/audit/raw",
            data: { type: "file", options: { file_path: "x" } },
          },
          { name: "kv", operation: "update", path: "sys/mounts/kv", data: { type: "kv" } },
        ],
      },
      audit: [{ type: "file", path: "declared", fileOptions: { filePath: "/a" } }],
    });
    const doc = parseHcl(renderConfig(c));
    assert.deepEqual(plain(one(doc, "audit", "file", "stdout").value), {
      description: "d",
      options: { file_path: "/dev/stdout" },
    });
    assert.deepEqual(plain(one(doc, "audit", "file", "raw").value), { options: { file_path: "x" } });
    assert.equal(find(doc, "audit").length, 3);
    const init = stanza(parseHcl(renderSelfInitRequests(c)), "initialize", "operator");
    assert.deepEqual(
      init.map((r) => r.labels[0]),
      ["kv"],
    );
    // With API audit creation allowed, they stay requests.
    const allowed = cluster({ ...c.spec, configuration: { unsafeAllowAPIAuditCreation: true } });
    assert.equal(find(parseHcl(renderConfig(allowed)), "audit").length, 1);
    assert.equal(stanza(parseHcl(renderSelfInitRequests(allowed)), "initialize", "operator").length, 3);
    assert.throws(
      () =>
        renderConfig(
          cluster({
            selfInit: {
              enabled: true,
              requests: [
                { name: "a", operation: "update", path: "sys/audit/x", auditDevice: { type: "file" } },
              ],
            },
          }),
        ),
      /selfInit\.requests\[0\]\.auditDevice\.fileOptions\.filePath: is required/,
    );
  });

  it("renders upstream's plugin download behaviours as OpenBao's fail, and OpenBao's own as given", () => {
    const behavior = (downloadBehavior: string) =>
      /plugin_download_behavior\s*=\s*"([a-z]+)"/.exec(
        renderConfig(cluster({ configuration: { plugin: { downloadBehavior } } })),
      )?.[1];
    assert.equal(behavior("direct"), "fail");
    assert.equal(behavior("standard"), "fail");
    assert.equal(behavior("continue"), "continue");
    assert.equal(behavior("fail"), "fail");
  });

  it("configHash is the sha256 of the text and follows every change", () => {
    const a = renderConfig(cluster());
    assert.match(configHash(a), /^[0-9a-f]{64}$/);
    assert.equal(configHash(a), configHash(renderConfig(cluster())));
    assert.notEqual(
      configHash(a),
      configHash(renderConfig(cluster({ configuration: { logLevel: "debug" } }))),
    );
    assert.notEqual(configHash(a), configHash(renderConfig(cluster(), { revision: "r2" })));
  });

  it("configEnv gives each pod its node id and addresses from its own name", () => {
    const env = configEnv(cluster({}, "demo", "ns1"), { clusterDomain: "k.local" });
    const by = Object.fromEntries(env.map((e) => [e.name, e]));
    assert.equal(env[0]!.name, "BAO_K8S_POD_NAME", "defined first, so later values can expand it");
    assert.deepEqual(by["BAO_K8S_POD_NAME"]!.valueFrom, { fieldRef: { fieldPath: "metadata.name" } });
    assert.equal(by["BAO_RAFT_NODE_ID"]!.value, "$(BAO_K8S_POD_NAME)");
    assert.equal(by["BAO_API_ADDR"]!.value, "https://$(BAO_K8S_POD_NAME).demo.ns1.svc:8200");
    assert.equal(by["BAO_CLUSTER_ADDR"]!.value, "https://$(BAO_K8S_POD_NAME).demo.ns1.svc:8201");
  });

  it("renders the PROXY protocol behaviour with its trusted proxies, and refuses what OpenBao cannot run", () => {
    const listener = (l: Record<string, unknown>) =>
      renderConfig(cluster({ configuration: { listener: l } }));
    assert.throws(
      () => listener({ proxyProtocolBehavior: "allow_any" }),
      /configuration\.listener\.proxyProtocolBehavior: allow_any is not supported by OpenBao/,
    );
    // Upstream's samples write use_proxy_protocol for "always read the header": OpenBao's use_always.
    assert.match(
      listener({ proxyProtocolBehavior: "use_proxy_protocol" }),
      /proxy_protocol_behavior\s*=\s*"use_always"/,
    );
    const refused = (l: Record<string, unknown>, message: string) =>
      assert.throws(
        () => listener(l),
        (e: Error) => e.message.includes(message),
        `${JSON.stringify(l)} should fail with: ${message}`,
      );
    for (const behavior of ["allow_authorized", "deny_unauthorized"])
      refused(
        { proxyProtocolBehavior: behavior },
        `configuration.listener.proxyProtocolAuthorizedAddrs: is required by proxyProtocolBehavior ${behavior}`,
      );
    refused(
      { proxyProtocolBehavior: "use_always", proxyProtocolAuthorizedAddrs: ["10.0.0.0/8"] },
      "proxyProtocolAuthorizedAddrs: is only read with proxyProtocolBehavior allow_authorized or deny_unauthorized",
    );
    for (const bad of [
      "10.0.0.0/33",
      "fd00::/129",
      "10.0.0",
      "10.0.0.0/8/1",
      "lb.example",
      "10.0.0.0/",
      " 10.0.0.1",
    ])
      refused(
        { proxyProtocolBehavior: "deny_unauthorized", proxyProtocolAuthorizedAddrs: ["10.1.1.1", bad] },
        `configuration.listener.proxyProtocolAuthorizedAddrs[1]: ${JSON.stringify(bad)} is not an IP address or CIDR`,
      );
    const always = parseHcl(listener({ proxyProtocolBehavior: "use_always" }));
    assert.equal(attr(stanza(always, "listener", "tcp"), "proxy_protocol_behavior"), "use_always");
    const trusted = stanza(
      parseHcl(
        listener({
          proxyProtocolBehavior: "allow_authorized",
          proxyProtocolAuthorizedAddrs: ["10.0.0.0/8", "fd00::1"],
        }),
      ),
      "listener",
      "tcp",
    );
    assert.equal(attr(trusted, "proxy_protocol_behavior"), "allow_authorized");
    assert.deepEqual(attr(trusted, "proxy_protocol_authorized_addrs"), ["10.0.0.0/8", "fd00::1"]);
  });

  it("refuses names and numbers it cannot write faithfully", () => {
    assert.throws(() => renderConfig(cluster({}, 'x"}')), /metadata\.name: must be a DNS name/);
    assert.throws(() => renderConfig(cluster({}), { revision: "a\nb" }), /revision: must be/);
    assert.throws(() => renderConfig(cluster({}), { peers: ['x" }'] }), /peers\[0\]: is not a DNS name/);
    assert.throws(
      () => renderConfig(cluster({ configuration: { cacheSize: 2 ** 60 } })),
      /configuration\.cache_size: [0-9]+ cannot be written exactly/,
    );
    assert.throws(
      () =>
        renderConfig(
          cluster({
            audit: [{ type: "file", path: "a", description: "\ud800", fileOptions: { filePath: "x" } }],
          }),
        ),
      /audit\[0\]\.description: contains a lone UTF-16 surrogate/,
    );
  });
});
