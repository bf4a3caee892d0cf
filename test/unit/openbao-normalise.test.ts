import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openBaoVerdict } from "../../src/targets/openbao/admission.js";
import { describeDeprecation, normaliseClusterSpec } from "../../src/targets/openbao/normalise.js";
import { upstreamRefusals } from "../../src/targets/openbao/upstream-refusals.js";
import { checkClusterSpec } from "../../src/targets/openbao/validate/cluster.js";
import { renderConfig } from "../../src/targets/openbao/workload/config/render.js";

describe("paths upstream removed in 0.5, mapped to their 0.5 form", () => {
  it("maps tls.acme.domain, maintenance.restartAt and the earlier kmip/ocikms names, naming each", () => {
    const spec = {
      version: "2.4.1",
      tls: {
        mode: "ACME",
        acme: { directoryURL: "https://acme.example.org/dir", domain: "bao.example.org" },
      },
      maintenance: { enabled: true, restartAt: "2026-12-06T06:00:00Z" },
      unseal: {
        type: "kmip",
        kmip: {
          address: "kmip.example.org:5696",
          certificate: "/c.pem",
          key: "/k.pem",
          tlsServerName: "kmip",
        },
        ocikms: { authType: "APIKey" },
      },
    };
    const before = structuredClone(spec);
    const { spec: out, deprecated } = normaliseClusterSpec(spec);
    assert.deepEqual(spec, before, "the input is not changed");
    assert.deepEqual(out.tls.acme, {
      directoryURL: "https://acme.example.org/dir",
      domains: ["bao.example.org"],
    });
    assert.deepEqual(out.maintenance, { enabled: true });
    assert.deepEqual((out as Record<string, unknown>)["runtime"], { restartAt: "2026-12-06T06:00:00Z" });
    assert.deepEqual(out.unseal.kmip, {
      endpoint: "kmip.example.org:5696",
      clientCert: "/c.pem",
      clientKey: "/k.pem",
      serverName: "kmip",
    });
    assert.deepEqual(out.unseal.ocikms, { authTypeAPIKey: true });
    assert.deepEqual(
      deprecated.map((d) => `${d.field} -> ${d.replacement}`),
      [
        "spec.tls.acme.domain -> spec.tls.acme.domains",
        "spec.maintenance.restartAt -> spec.runtime.restartAt",
        "spec.unseal.kmip.address -> spec.unseal.kmip.endpoint",
        "spec.unseal.kmip.certificate -> spec.unseal.kmip.clientCert",
        "spec.unseal.kmip.key -> spec.unseal.kmip.clientKey",
        "spec.unseal.kmip.tlsServerName -> spec.unseal.kmip.serverName",
        "spec.unseal.ocikms.authType -> spec.unseal.ocikms.authTypeAPIKey",
      ],
    );
  });

  it("keeps the 0.5 value when both forms are set, and reports the earlier one", () => {
    const { spec, deprecated } = normaliseClusterSpec({
      tls: { acme: { domain: "old.example.org", domains: ["new.example.org"] } },
      maintenance: { restartAt: "old" },
      runtime: { restartAt: "new" },
    });
    assert.deepEqual(spec.tls.acme, { domains: ["new.example.org"] });
    assert.deepEqual(spec.runtime, { restartAt: "new" });
    assert.equal(deprecated.length, 2);
  });

  it("changes nothing for a 0.5 spec or for what is not an object", () => {
    const spec = { tls: { acme: { domains: ["a.example.org"] } }, runtime: { restartAt: "x" } };
    assert.deepEqual(normaliseClusterSpec(spec), { spec, deprecated: [] });
    assert.deepEqual(normaliseClusterSpec(null), { spec: null, deprecated: [] });
    assert.deepEqual(normaliseClusterSpec([1]), { spec: [1], deprecated: [] });
    // upgrade.tokenSecretRef is still read: reported, left where it is.
    const withToken = { upgrade: { tokenSecretRef: { name: "upgrade-token" } } };
    assert.deepEqual(normaliseClusterSpec(withToken), {
      spec: withToken,
      deprecated: [{ field: "spec.upgrade.tokenSecretRef", replacement: "spec.upgrade.jwtAuthRole" }],
    });
    // An ocikms mode it does not know is left for the seal renderer to refuse by name.
    assert.deepEqual(normaliseClusterSpec({ unseal: { ocikms: { authType: "token" } } }).deprecated, []);
  });

  it("renders the same seal stanza from the earlier and the 0.5 names (kmip, ocikms), as before normalisation", () => {
    const kmip05 = {
      endpoint: "kmip.example.org:5696",
      kmsKeyID: "k1",
      clientCert: "/c.pem",
      clientKey: "/k.pem",
    };
    const kmip04 = { address: "kmip.example.org:5696", kmsKeyID: "k1", certificate: "/c.pem", key: "/k.pem" };
    const spec = (kmip: object) => ({
      version: "2.4.1",
      storage: { size: "1Gi" },
      unseal: { type: "kmip", kmip },
    });
    const render = (s: object) =>
      renderConfig({ metadata: { name: "bao", namespace: "ns" }, spec: s } as never);
    assert.equal(render(normaliseClusterSpec(spec(kmip04)).spec), render(spec(kmip05)));
    assert.match(render(spec(kmip05)), /client_cert\s*=\s*"\/c\.pem"/);
    // Byte for byte what the earlier names rendered before normalisation: running clusters do not roll.
    assert.equal(render(normaliseClusterSpec(spec(kmip04)).spec), render(spec(kmip04)));
    const oci = {
      version: "2.4.1",
      storage: { size: "1Gi" },
      unseal: {
        type: "ocikms",
        ocikms: {
          keyID: "k",
          authType: "apikey",
          cryptoEndpoint: "https://c",
          managementEndpoint: "https://m",
        },
      },
    };
    assert.equal(render(normaliseClusterSpec(oci).spec), render(oci));
  });

  it("renders a KMS plugin seal the same from upstream 0.5's {pluginName, config} and the earlier {name, settings}", () => {
    const plugins = [
      {
        type: "kms",
        name: "softhsm",
        version: "v1.0.0",
        binaryName: "kms",
        sha256sum: "a".repeat(64),
        image: "ghcr.io/example/kms",
      },
    ];
    const spec = (kms: object) => ({
      version: "2.6.0",
      storage: { size: "1Gi" },
      plugins,
      unseal: { type: "kms", kms },
    });
    const render = (s: object) =>
      renderConfig({ metadata: { name: "bao", namespace: "ns" }, spec: s } as never);
    const v05 = spec({ pluginName: "softhsm", config: { lib: "/usr/lib/softhsm.so", key_label: "bao" } });
    const earlier = spec({ name: "softhsm", lib: "/usr/lib/softhsm.so", key_label: "bao" });
    assert.equal(render(v05), render(earlier));
    assert.match(render(v05), /seal "softhsm" \{\n\s+lib = "\/usr\/lib\/softhsm.so"/);
    assert.deepEqual(checkClusterSpec("bao", v05, "ns"), []);
    // The plugin must be declared, whichever form names it.
    assert.deepEqual(
      checkClusterSpec("bao", { ...v05, plugins: [] }, "ns").map((p) => p.field),
      ["spec.unseal.kms.pluginName"],
    );
  });

  it("validates kmip with upstream 0.5's endpoint as it did with the earlier address", () => {
    const spec = (kmip: object) => ({
      version: "2.4.1",
      storage: { size: "1Gi" },
      unseal: { type: "kmip", kmip },
    });
    assert.deepEqual(
      checkClusterSpec("bao", spec({ endpoint: "kmip.example.org:5696", kmsKeyID: "k" }), "ns"),
      [],
    );
    assert.deepEqual(checkClusterSpec("bao", spec({ address: "kmip.example.org:5696" }), "ns"), []);
    assert.deepEqual(
      checkClusterSpec("bao", spec({ kmsKeyID: "k" }), "ns").map((p) => p.field),
      ["spec.unseal.kmip.endpoint"],
    );
  });

  it("warns at admission, once per earlier path, naming the replacement", () => {
    const verdict = openBaoVerdict({
      uid: "1",
      operation: "CREATE",
      kind: { group: "openbao.org", version: "v1alpha1", kind: "OpenBaoCluster" },
      name: "bao",
      namespace: "ns",
      object: {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: "bao", namespace: "ns" },
        spec: { version: "2.4.1", storage: { size: "1Gi" }, maintenance: { restartAt: "now" } },
      },
    } as never);
    assert.deepEqual(verdict.warnings, [
      describeDeprecation({ field: "spec.maintenance.restartAt", replacement: "spec.runtime.restartAt" }),
    ]);
    assert.match(
      verdict.warnings[0]!,
      /spec\.maintenance\.restartAt is deprecated .*use spec\.runtime\.restartAt/,
    );
  });

  it("names what upstream 0.5 refuses and this schema admits, and nothing for a manifest upstream admits", () => {
    const acme = { mode: "ACME", acme: { directoryURL: "https://acme.example.org/dir" } };
    assert.deepEqual(
      upstreamRefusals({
        tls: acme,
        backup: { target: { bucket: "b" } },
        unseal: { type: "pkcs11", pkcs11: { lib: "/l.so", keyLabel: "k" } },
      }).map((w) => w.split(":")[0]),
      ["spec.tls.acme.sharedCache", "spec.backup.target.endpoint", "spec.unseal.pkcs11"],
    );
    assert.deepEqual(upstreamRefusals({ source: { target: { provider: "s3" } } }).length, 1);
    assert.deepEqual(
      upstreamRefusals({
        replicas: 1,
        tls: acme,
        backup: { target: { bucket: "b", endpoint: "https://s3.example.org" } },
        unseal: { type: "pkcs11", pkcs11: { lib: "/l.so", keyLabel: "k", slot: "0" } },
      }),
      [],
    );
    assert.deepEqual(
      upstreamRefusals({ replicas: 1, upgrade: { strategy: "BlueGreen" }, tls: acme }).length,
      1,
    );
    assert.deepEqual(upstreamRefusals({ backup: { target: { provider: "gcs", bucket: "b" } } }), []);
    assert.deepEqual(upstreamRefusals("nonsense"), []);
  });
});
