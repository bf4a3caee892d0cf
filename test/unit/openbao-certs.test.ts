import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createCertificateAuthority, ipBytes, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import { parseDurationMs } from "../../src/targets/openbao/workload/certs/duration.js";
import { sanKey, sanKeys } from "../../src/targets/openbao/workload/certs/pem.js";
import {
  caValidityMs,
  certificateHash,
  leafValidityMs,
  nextBundle,
  planCa,
  planLeaf,
  requiredExternalNames,
  serverNames,
  type TlsCluster,
  tlsSettings,
} from "../../src/targets/openbao/workload/certs/plan.js";
import { validateServerMaterial } from "../../src/targets/openbao/workload/certs/validate.js";

const HOUR = 3_600_000;
const cluster = (spec: TlsCluster["spec"] = {}): TlsCluster => ({
  metadata: { name: "bao", namespace: "vault" },
  spec,
});
const t0 = new Date("2026-06-01T00:00:00Z");

/** The openssl CLI as an independent judge of what node:crypto built. */
function opensslVerify(caPem: string, leafPem: string): string {
  const dir = mkdtempSync(join(tmpdir(), "ot-certs-"));
  try {
    writeFileSync(join(dir, "ca.pem"), caPem);
    writeFileSync(join(dir, "leaf.pem"), leafPem);
    return execFileSync(
      "openssl",
      ["verify", "-CAfile", join(dir, "ca.pem"), "-purpose", "sslserver", join(dir, "leaf.pem")],
      { encoding: "utf8" },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("openbao certificates: issuing", () => {
  const now = new Date();
  const ca = createCertificateAuthority("bao.vault OpenBao CA", now, caValidityMs(720 * HOUR));
  const settings = tlsSettings(
    cluster({
      replicas: 3,
      readReplicas: { replicas: 2 },
      tls: { extraSANs: ["bao.example.com", "10.1.2.3"] },
    }),
  );
  const names = serverNames(
    cluster({
      replicas: 3,
      readReplicas: { replicas: 2 },
      tls: { extraSANs: ["bao.example.com", "10.1.2.3"] },
    }),
    settings,
  );
  const leaf = issueServerCertificate(ca, { commonName: "bao.vault.svc", names, now, validityMs: 48 * HOUR });

  it("builds a CA and a leaf that openssl verifies for TLS servers", () => {
    assert.match(opensslVerify(ca.certPem, leaf.certPem), /leaf\.pem: OK/);
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(caCert.ca, true);
    const x = new X509Certificate(leaf.certPem);
    assert.equal(x.ca, false);
    assert.ok(x.checkIssued(caCert) && x.verify(caCert.publicKey));
  });

  it("covers every Service, every pod (voters and read replicas), loopback and the extra SANs", () => {
    const x = new X509Certificate(leaf.certPem);
    for (const host of [
      "bao",
      "bao.vault.svc",
      "bao.vault.svc.cluster.local",
      "bao-public.vault.svc",
      "bao-public.vault.svc.cluster.local",
      "bao-active.vault.svc.cluster.local",
      "bao-read.vault.svc",
      "bao-2.bao.vault.svc",
      "bao-2.bao.vault.svc.cluster.local",
      "bao-read-1.bao.vault.svc",
      "bao-read-1.bao.vault.svc.cluster.local",
      "bao-0",
      "bao-read-1",
      "bao.example.com",
    ])
      assert.notEqual(x.checkHost(host), undefined, host);
    assert.equal(x.checkIP("127.0.0.1"), "127.0.0.1");
    assert.equal(x.checkIP("10.1.2.3"), "10.1.2.3");
    assert.equal(x.checkHost("bao-3.bao.other.svc"), undefined);
    assert.deepEqual(new Set(sanKeys(x)), new Set(names.map(sanKey)));
  });

  it("encodes IPv6 addresses, abridged or not", () => {
    assert.equal(ipBytes("::1").toString("hex"), `${"0".repeat(30)}01`);
    assert.equal(ipBytes("fd00::1:2").toString("hex"), "fd000000000000000000000000010002");
    assert.equal(ipBytes("::ffff:10.0.0.1").toString("hex"), "00000000000000000000ffff0a000001");
    assert.equal(sanKey("FD00:0:0:0:0:0:1:2"), sanKey("fd00::1:2"));
  });

  it("gives the active leaf a hash that changes with the certificate or the key", () => {
    const other = issueServerCertificate(ca, { commonName: "x", names, now, validityMs: HOUR });
    assert.match(certificateHash(leaf.certPem, leaf.keyPem), /^[0-9a-f]{64}$/);
    assert.notEqual(certificateHash(leaf.certPem, leaf.keyPem), certificateHash(other.certPem, other.keyPem));
    assert.equal(certificateHash(leaf.certPem, leaf.keyPem), certificateHash(leaf.certPem, leaf.keyPem));
  });
});

describe("openbao certificates: settings", () => {
  it("defaults to OperatorManaged, 720h, and the identity module's Secret names", () => {
    const s = tlsSettings(cluster());
    assert.equal(s.mode, "OperatorManaged");
    assert.equal(s.enabled, true);
    assert.equal(s.rotationMs, 720 * HOUR);
    assert.equal(s.caSecretName, "bao-tls-ca");
    assert.equal(s.serverSecretName, "bao-tls-server");
  });

  it("names the field of a bad extra SAN or rotation period", () => {
    assert.throws(
      () => tlsSettings(cluster({ tls: { extraSANs: ["ok.example", 'bad" } name'] } })),
      /spec\.tls\.extraSANs\[1\]: .* is neither a DNS name nor an IP address/,
    );
    assert.throws(
      () => tlsSettings(cluster({ tls: { rotationPeriod: "soon" } })),
      /spec\.tls\.rotationPeriod/,
    );
  });

  it("parses Go-style durations", () => {
    assert.equal(parseDurationMs("1h30m", "f"), 90 * 60_000);
    assert.equal(parseDurationMs("1.5h", "f"), 90 * 60_000);
    assert.equal(parseDurationMs("2d", "f"), 48 * HOUR);
    assert.throws(() => parseDurationMs("0s", "f"), /f: must be longer than zero/);
    assert.throws(() => parseDurationMs("5 minutes", "f"), /f: "5 minutes" is not a duration/);
  });

  it("asks External certificates to cover the client Service and every pod by the address it advertises", () => {
    assert.deepEqual(requiredExternalNames(cluster({ replicas: 2 })), [
      "bao-public.vault.svc",
      "bao-0.bao.vault.svc",
      "bao-1.bao.vault.svc",
    ]);
    // A cluster that kept its old peer Service advertises the full names it always did.
    const kept = cluster({ replicas: 1 });
    kept.metadata.annotations = { "openbao.org/peer-service": "bao-internal" };
    assert.deepEqual(requiredExternalNames(kept), [
      "bao-public.vault.svc",
      "bao-0.bao-internal.vault.svc.cluster.local",
    ]);
  });
});

describe("openbao certificates: rotation plan", () => {
  const rotation = 10 * HOUR;
  const ca = createCertificateAuthority("ca", t0, caValidityMs(rotation));
  const bundle = nextBundle(ca.certPem, undefined, t0);
  const names = serverNames(cluster({ replicas: 1 }), tlsSettings(cluster({ replicas: 1 })));
  const issued = issueServerCertificate(ca, {
    commonName: "bao",
    names,
    now: t0,
    validityMs: leafValidityMs(rotation),
  });
  const stored = { ...issued, caPem: bundle };
  const at = (ms: number) => new Date(t0.getTime() + ms);

  it("keeps a current leaf and CA", () => {
    assert.equal(planLeaf(stored, ca, bundle, names, rotation, at(HOUR)).action, "keep");
    assert.equal(planCa({ ...ca, bundlePem: bundle }, rotation, at(HOUR)).action, "keep");
  });

  it("reissues once the rotation period has passed, before expiry", () => {
    const d = planLeaf(stored, ca, bundle, names, rotation, at(rotation + HOUR));
    assert.deepEqual(d, { action: "issue", reason: "the rotation period has passed" });
    assert.ok(t0.getTime() + rotation + HOUR < Date.parse(new X509Certificate(issued.certPem).validTo));
  });

  it("reissues when the names change, the key does not match, the CA changes or nothing is stored", () => {
    const more = serverNames(cluster({ replicas: 3 }), tlsSettings(cluster({ replicas: 3 })));
    assert.equal(planLeaf(stored, ca, bundle, more, rotation, at(HOUR)).reason, "the names to cover changed");
    const strangerKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString();
    assert.match(
      planLeaf({ ...stored, keyPem: strangerKey }, ca, bundle, names, rotation, at(HOUR)).reason,
      /does not match/,
    );
    const ca2 = createCertificateAuthority("ca2", t0, caValidityMs(rotation));
    assert.match(
      planLeaf(stored, ca2, bundle, names, rotation, at(HOUR)).reason,
      /not issued by the CA in force/,
    );
    assert.equal(planLeaf(undefined, ca, bundle, names, rotation, t0).action, "issue");
  });

  it("replaces a CA with less than three rotation periods left, and keeps trusting the old one meanwhile", () => {
    const short = createCertificateAuthority("short", t0, 20 * HOUR);
    const d = planCa({ ...short, bundlePem: short.certPem }, rotation, t0);
    assert.equal(d.action, "replace");
    assert.match(d.reason, /the CA expires at/);
    const b = nextBundle(ca.certPem, short.certPem, t0);
    assert.equal(b.match(/BEGIN CERTIFICATE/g)?.length, 2);
    assert.ok(b.startsWith(ca.certPem.trim()));
    // Once the old CA has expired it leaves the bundle.
    assert.equal(nextBundle(ca.certPem, short.certPem, at(21 * HOUR)).match(/BEGIN CERTIFICATE/g)?.length, 1);
  });
});

describe("openbao certificates: validating External Secrets", () => {
  const ca = createCertificateAuthority("ext-ca", t0, 1000 * HOUR);
  const required = requiredExternalNames(cluster({ replicas: 1 }));
  const good = issueServerCertificate(ca, {
    commonName: "bao",
    names: ["*.bao.vault.svc", "*.vault.svc"],
    now: t0,
    validityMs: 100 * HOUR,
  });
  const input = { requiredNames: required, now: new Date(t0.getTime() + HOUR) };

  it("accepts a certificate with upstream's documented names (*.<name>.<ns>.svc, *.<ns>.svc)", () => {
    assert.deepEqual(validateServerMaterial({ ...good, caPem: ca.certPem }, input), []);
  });

  it("names each problem without showing key material", () => {
    const other = issueServerCertificate(ca, {
      commonName: "x",
      names: ["x.example"],
      now: t0,
      validityMs: HOUR,
    });
    const strange = createCertificateAuthority("other", t0, 1000 * HOUR);
    const problems = validateServerMaterial(
      { certPem: other.certPem, keyPem: good.keyPem, caPem: strange.certPem },
      { requiredNames: required, now: new Date(t0.getTime() + 2 * HOUR) },
    );
    assert.equal(problems.length, 4, problems.join("\n"));
    assert.match(problems[0]!, /^tls\.key: does not belong/);
    assert.match(problems[1]!, /^tls\.crt: the certificate expired at/);
    assert.match(problems[2]!, /do not cover bao-public\.vault\.svc, bao-0\.bao\.vault\.svc/);
    assert.match(problems[3]!, /^ca\.crt: no certificate in it verifies tls\.crt/);
    const keyBody = good.keyPem.split("\n")[1]!;
    for (const p of problems) assert.ok(!p.includes(keyBody.slice(0, 20)));
  });

  it("reports unreadable input per Secret key", () => {
    assert.deepEqual(validateServerMaterial({ certPem: "nope", keyPem: "x", caPem: "y" }, input), [
      "tls.crt: holds no PEM certificate",
    ]);
    assert.deepEqual(validateServerMaterial({ certPem: good.certPem, keyPem: "junk", caPem: "" }, input), [
      "tls.key: is not a PEM private key",
      "ca.crt: holds no PEM certificate",
    ]);
  });
});

describe("openbao certificates: hostile Secret content", () => {
  const ca = createCertificateAuthority("ca", t0, 1000 * HOUR);
  const leaf = issueServerCertificate(ca, { commonName: "x", names: ["x"], now: t0, validityMs: 10 * HOUR });
  const rsaKey = generateKeyPairSync("rsa", { modulusLength: 1024 })
    .privateKey.export({ type: "pkcs8", format: "pem" })
    .toString();
  const brokenBlock = "-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n";

  it("reports problems instead of throwing", () => {
    const input = { requiredNames: ["x"], now: new Date(t0.getTime() + HOUR) };
    assert.deepEqual(
      validateServerMaterial({ certPem: leaf.certPem, keyPem: rsaKey, caPem: ca.certPem }, input),
      ["tls.key: does not belong to the certificate in tls.crt"],
    );
    assert.deepEqual(
      validateServerMaterial({ certPem: brokenBlock, keyPem: rsaKey, caPem: brokenBlock }, input),
      ["tls.crt: a certificate does not parse"],
    );
    assert.deepEqual(validateServerMaterial({ ...leaf, caPem: `${ca.certPem}${brokenBlock}` }, input), [
      "ca.crt: a certificate does not parse",
    ]);
  });

  it("plans a new certificate or CA for unreadable stored ones", () => {
    const bundle = nextBundle(ca.certPem, brokenBlock, t0);
    assert.equal(bundle, ca.certPem);
    assert.equal(planCa({ certPem: brokenBlock, keyPem: "", bundlePem: "" }, HOUR, t0).action, "replace");
    assert.equal(
      planCa({ certPem: leaf.certPem, keyPem: leaf.keyPem, bundlePem: "" }, HOUR, t0).action,
      "replace",
    );
    assert.equal(
      planLeaf({ certPem: brokenBlock, keyPem: rsaKey, caPem: "" }, ca, bundle, ["x"], HOUR, t0).action,
      "issue",
    );
    assert.equal(
      planLeaf({ ...leaf, keyPem: rsaKey, caPem: bundle }, ca, bundle, ["x"], HOUR, t0).action,
      "issue",
    );
  });
});

describe("openbao certificates: long names", () => {
  it("keeps the common name within 64 characters; the SANs carry the full names", () => {
    const long = `${"n".repeat(40)}.${"s".repeat(40)}.svc`;
    const now = new Date();
    const ca = createCertificateAuthority(`${long} OpenBao CA`, now, 100 * HOUR);
    const leaf = issueServerCertificate(ca, { commonName: long, names: [long], now, validityMs: HOUR });
    const x = new X509Certificate(leaf.certPem);
    assert.equal(x.subject, `CN=${long.slice(0, 64)}`);
    assert.notEqual(x.checkHost(long), undefined);
    assert.match(opensslVerify(ca.certPem, leaf.certPem), /OK/);
  });
});
