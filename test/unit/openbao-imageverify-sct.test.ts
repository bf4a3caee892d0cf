import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject, sign, verify, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { children } from "../../src/runtime/pki/der-read.js";
import { identityPolicy } from "../../src/targets/openbao/imageverify/identity.js";
import { checkKeyless } from "../../src/targets/openbao/imageverify/keyless.js";
import {
  embeddedScts,
  OID_SCT_LIST,
  parseSctList,
  precertificateTbs,
  sctProblem,
  sctSignedData,
} from "../../src/targets/openbao/imageverify/sct.js";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { createKeylessCa, OID_CT_POISON, type SignerCertificateRequest } from "../support/keyless-ca.js";

// Embedded SCTs (RFC 6962) checked offline against the trusted root's CT logs. The certificates
// come from the test CA with a CT log stand-in, whose SCT encoder is written separately from the
// checker (test/support/keyless-ca.ts); real cosign's verdicts on the same cases are compared in
// integration/openbao-image-verification-sct.

const NOW = Date.parse("2026-12-06T12:00:00Z");
const ISSUER = "https://issuer.example.test";
const SUBJECT = "https://git.example.test/platform/openbao/.github/workflows/release.yml@refs/tags/v1";

function signer(): { pub: string; priv: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { pub: publicKey.export({ format: "pem", type: "spki" }).toString(), priv: privateKey };
}

const ca = createKeylessCa("fulcio-ct", new Date(NOW), { ctLog: true });
const root = parseTrustRoot(ca.trustedRootJson(), "cm");
const s = signer();
const issue = (sct: SignerCertificateRequest["sct"], from = ca) =>
  new X509Certificate(
    from.issue({
      publicKeyPem: s.pub,
      issuer: ISSUER,
      subject: SUBJECT,
      notBefore: new Date(NOW - 60_000),
      notAfter: new Date(NOW + 600_000),
      sct,
    }),
  );
const issuerCert = new X509Certificate(ca.chainPem);

/** The OIDs of a certificate's extensions, in order. */
function extensionOids(der: Buffer): string[] {
  const c = children(der, 0)[0]!;
  const tbs = children(der, c.contentStart, c.end)[0]!;
  return oidsOfTbs(der.subarray(tbs.start, tbs.end));
}
function oidsOfTbs(tbs: Buffer): string[] {
  const t = children(tbs, 0)[0]!;
  const wrapper = children(tbs, t.contentStart, t.end).find((e) => e.tag === 0xa3);
  if (!wrapper) return [];
  const list = children(tbs, wrapper.contentStart, wrapper.end)[0]!;
  return children(tbs, list.contentStart, list.end).map((e) => {
    const id = children(tbs, e.contentStart, e.end)[0]!;
    return tbs.subarray(id.contentStart, id.end).toString("hex");
  });
}
const hexOid = (dotted: string) => {
  // Only the CT OIDs are needed here: 1.3.6.1.4.1.11129.2.4.N
  const n = Number(dotted.split(".").pop());
  return Buffer.from([0x2b, 6, 1, 4, 1, 0xd6, 0x79, 2, 4, n]).toString("hex");
};

describe("SCTs: reading the certificate", () => {
  it("finds the SCT list extension and reads each SCT's log, time and signature", () => {
    const cert = issue("valid");
    assert.ok(extensionOids(cert.raw).includes(hexOid(OID_SCT_LIST)));
    const scts = embeddedScts(cert.raw);
    assert.equal(scts.length, 1);
    assert.equal(scts[0]!.logId, root.ctLogs[0]!.logId);
    assert.equal(Number(scts[0]!.timestamp), Date.parse(cert.validFrom));
    assert.equal(scts[0]!.hashAlgorithm, 4);
    assert.equal(scts[0]!.signatureAlgorithm, 3);
    assert.deepEqual(embeddedScts(issue("none").raw), []);
  });

  it("refuses a malformed list, saying what is wrong", () => {
    assert.throws(() => parseSctList(Buffer.from([0, 5, 0])), /SCT list is malformed: its length is wrong/);
    assert.throws(() => parseSctList(Buffer.from([0, 3, 0, 9, 0])), /an SCT runs past the end/);
    const short = Buffer.from([0, 3, 0, 1, 0]);
    assert.throws(() => parseSctList(short), /an SCT is malformed: truncated/);
    const v2 = Buffer.concat([Buffer.from([0, 47, 0, 45, 1]), Buffer.alloc(44)]);
    assert.throws(() => parseSctList(v2), /version 1 is not v1/);
  });

  it("rebuilds the precertificate's TBS: the certificate's without the SCT list, other extensions in order", () => {
    const cert = issue("valid");
    const tbs = precertificateTbs(cert.raw);
    const before = extensionOids(cert.raw);
    assert.deepEqual(
      oidsOfTbs(tbs),
      before.filter((o) => o !== hexOid(OID_SCT_LIST)),
    );
    assert.ok(!oidsOfTbs(tbs).includes(hexOid(OID_CT_POISON)));
    // Without an SCT list, the TBS comes back byte for byte.
    const plain = issue("none");
    const c = children(plain.raw, 0)[0]!;
    const t = children(plain.raw, c.contentStart, c.end)[0]!;
    assert.deepEqual(precertificateTbs(plain.raw), plain.raw.subarray(t.start, t.end));
  });

  it("signs over exactly RFC 6962's structure: one changed byte anywhere and the SCT fails", () => {
    const cert = issue("valid");
    const sct = embeddedScts(cert.raw)[0]!;
    const spki = issuerCert.publicKey.export({ type: "spki", format: "der" });
    const data = sctSignedData(sct, spki, precertificateTbs(cert.raw));
    const key = root.ctLogs[0]!.key;
    const ok = (d: Buffer) => verify("sha256", d, key, sct.signature);
    assert.equal(ok(data), true);
    assert.equal(data[0], 0, "version v1");
    assert.equal(data[1], 0, "certificate_timestamp");
    assert.equal(data.readUInt16BE(10), 1, "precert_entry");
    for (const at of [0, 1, 5, 11, 20, 50, data.length - 1]) {
      const bad = Buffer.from(data);
      bad[at]! ^= 1;
      assert.equal(ok(bad), false, `byte ${at} changed`);
    }
  });
});

describe("SCTs: the verdict", () => {
  it("admits an SCT from a log of the root", () => {
    assert.equal(sctProblem(issue("valid"), issuerCert, root.ctLogs), undefined);
  });

  it("refuses no SCT, an unknown log, a tampered signature, the wrong log key, a tampered certificate", () => {
    const why = (c: X509Certificate, logs = root.ctLogs) => sctProblem(c, issuerCert, logs) ?? "admitted";
    assert.match(why(issue("none")), /certificate does not include required embedded SCT/);
    assert.match(
      why(issue("unknown-log")),
      /unable to meet threshold of 1: ctfe public key not found for an embedded SCT: its CT log \(log ID [0-9a-f]{64}\) is not in the trusted root/,
    );
    assert.match(
      why(issue("tampered")),
      /error verifying embedded SCT: its signature does not verify with its CT log's key/,
    );
    // The log ID matches but the key is another one: the signature cannot verify.
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey;
    assert.match(why(issue("valid"), [{ ...root.ctLogs[0]!, key: other }]), /does not verify/);
    // The SCT's log key was not valid then.
    assert.match(
      why(issue("valid"), [{ ...root.ctLogs[0]!, validFrom: NOW + 3600_000 }]),
      /outside its CT log key's validFor range/,
    );
    // A certificate changed after the log signed it (its notAfter moved): the SCT no longer matches.
    const cert = issue("valid");
    const der = Buffer.from(cert.raw);
    const validTo = Buffer.from(
      new Date(cert.validTo).toISOString().replace(/[-:T]/g, "").slice(2, 14),
      "ascii",
    );
    const at = der.indexOf(validTo);
    assert.ok(at > 0);
    der[at + 11] = der[at + 11] === 0x30 ? 0x31 : 0x30;
    const tampered = new X509Certificate(der);
    assert.match(why(tampered), /signature does not verify/);
    // The issuer's key is part of what was signed: another issuer, another hash.
    const stranger = new X509Certificate(createKeylessCa("x", new Date(NOW)).chainPem);
    assert.match(sctProblem(issue("valid"), stranger, root.ctLogs) ?? "admitted", /does not verify/);
  });

  it("is part of the keyless check when the root lists CT logs, and not when it lists none", () => {
    const payload = Buffer.from("payload");
    const sig = sign("sha256", payload, s.priv);
    const policy = identityPolicy({ issuer: ISSUER, subject: SUBJECT }, "spec.imageVerification")!;
    const check = (cert: X509Certificate, trustRoot = root) =>
      checkKeyless(cert.toString(), payload, sig, {
        policy,
        trustRoot,
        field: "spec.imageVerification",
        now: NOW,
      });
    assert.equal(check(issue("valid")).ok, true);
    const refused = check(issue("none"));
    assert.ok(!refused.ok && /does not include required embedded SCT/.test(refused.why));
    const doc = JSON.parse(ca.trustedRootJson());
    doc.ctlogs = [];
    assert.equal(check(issue("none"), parseTrustRoot(JSON.stringify(doc), "cm")).ok, true);
    doc.ctlogs = [{ baseUrl: "https://ct.example" }];
    assert.throws(
      () => parseTrustRoot(JSON.stringify(doc), "cm"),
      /cm: ctlogs\[0\]\.publicKey has no rawBytes/,
    );
  });
});

describe("SCTs: Sigstore's public-good instance", () => {
  // Public data, not code: Sigstore's public-good trusted_root.json and a certificate public Fulcio
  // issued in April 2023 (both as published in sigstore-go's examples). Proves the precertificate
  // rebuilt here is the one a real CT log signed.
  const root = parseTrustRoot(
    readFileSync("test/fixtures/sigstore/public-good-trusted-root.json", "utf8"),
    "public-good",
  );
  const leaf = new X509Certificate(readFileSync("test/fixtures/sigstore/public-good-fulcio-leaf.pem"));
  const issuer = root.authorities
    .flatMap((a) => a.certificates)
    .find((c) => c.ca && leaf.checkIssued(c) && leaf.verify(c.publicKey))!;

  it("verifies the real Fulcio certificate's SCT with the real CT log key, and no other", () => {
    assert.ok(root.ctLogs.length > 0, "the public-good root lists CT logs");
    assert.ok(issuer, "the leaf chains to the public-good Fulcio");
    assert.equal(sctProblem(leaf, issuer, root.ctLogs), undefined);
    assert.match(sctProblem(leaf, issuer, []) ?? "admitted", /ctfe public key not found/);
    // Another issuer key hash: the log signed this issuer's, so the SCT no longer verifies.
    const other = new X509Certificate(createKeylessCa("x", new Date(NOW)).chainPem);
    assert.match(sctProblem(leaf, other, root.ctLogs) ?? "admitted", /error verifying embedded SCT/);
  });
});
