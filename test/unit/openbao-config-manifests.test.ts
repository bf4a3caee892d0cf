import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { renderConfig, renderSelfInitRequests } from "../../src/targets/openbao/workload/config/index.js";
import { type Entry, find, one, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";

/** The upstream-style manifests the API tests apply to the real API server, through the renderer. */

const MANIFESTS = fileURLToPath(new URL("../../../test/fixtures/openbao/manifests/", import.meta.url));

function load(file: string): OpenBaoCluster {
  const docs = parseAllDocuments(readFileSync(`${MANIFESTS}${file}`, "utf8")).map((d) => d.toJS());
  const cluster = docs.find((d) => d?.kind === "OpenBaoCluster") as OpenBaoCluster;
  assert.ok(cluster, `${file} holds an OpenBaoCluster`);
  cluster.metadata.namespace ??= "apps";
  return cluster;
}

describe("config.hcl from upstream-style manifests", () => {
  it("minimal: static seal, operator-managed TLS, three voters", () => {
    const doc = parseHcl(renderConfig(load("minimal.yaml")));
    assert.equal(find(doc, "seal").length, 1);
    one(doc, "seal", "static");
    const storage = one(doc, "storage", "raft").value as Entry[];
    assert.equal(find(storage, "retry_join").length, 3);
    assert.equal(renderSelfInitRequests(load("minimal.yaml")), "");
  });

  it("acme: ACME listener with the single domain and the CA root path as given", () => {
    const listener = plain(one(parseHcl(renderConfig(load("acme.yaml"))), "listener", "tcp").value) as Record<
      string,
      unknown
    >;
    assert.deepEqual(listener["tls_acme_domains"], ["bao.internal.example.com"]);
    assert.equal(listener["tls_acme_ca_root"], "/etc/ssl/certs/internal-root.pem");
    assert.equal(listener["tls_acme_email"], "pki-team@example.com");
  });

  it("self-init: the audit request becomes a stanza, the others stay requests in order", () => {
    const cluster = load("self-init.yaml");
    const doc = parseHcl(renderConfig(cluster));
    assert.deepEqual(plain(one(doc, "audit", "file", "stdout").value), {
      options: { file_path: "/dev/stdout" },
    });
    // The manifest enables selfInit.oidc: its bootstrap needs the API server's issuer and keys.
    const oidc = {
      issuer: "https://kubernetes.default.svc",
      publicKeysPem: ["-----BEGIN PUBLIC KEY-----\n"],
    };
    const init = one(parseHcl(renderSelfInitRequests(cluster, oidc)), "initialize", "operator")
      .value as Entry[];
    assert.deepEqual(
      init.map((r) => r.labels[0]),
      [
        "enable_kubernetes_auth",
        "configure_kubernetes_auth",
        "apps_read_policy",
        "enable_kv",
        "optional_userpass",
      ],
    );
    const policy = plain(one(init, "request", "apps_read_policy").value) as { data: { policy: string } };
    assert.match(policy.data.policy, /^path "secret\/data\/apps\/\*" \{\n/);
  });

  it("backup-bluegreen: renders (backup and upgrade settings are not part of config.hcl)", () => {
    parseHcl(renderConfig(load("backup-bluegreen.yaml")));
  });

  it("hardened: refused by name, because deny_unauthorized without trusted proxies would refuse every client", () => {
    assert.throws(
      () => renderConfig(load("hardened-external-tls.yaml")),
      /configuration\.listener\.proxyProtocolAuthorizedAddrs: is required by proxyProtocolBehavior deny_unauthorized/,
    );
    const cluster = load("hardened-external-tls.yaml");
    (cluster.spec.configuration as { listener?: unknown }).listener = undefined;
    const doc = parseHcl(renderConfig(cluster));
    assert.deepEqual(plain(one(doc, "seal", "awskms").value), {
      region: "eu-west-1",
      kms_key_id: "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    });
    assert.equal(plain(one(doc, "log_format").value), "json");
    assert.equal(plain(one(doc, "ui").value), false);
    assert.deepEqual(plain(one(doc, "telemetry").value), {
      prometheus_retention_time: "24h",
      disable_hostname: true,
    });
  });
});
