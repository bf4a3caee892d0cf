import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, type KeyObject, sign, X509Certificate } from "node:crypto";
import { describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import { extension, signCertificate } from "../../src/runtime/pki/certificate.js";
import { implicit, oid, sequence, utf8String } from "../../src/runtime/pki/der.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { signerIdentity } from "../../src/targets/openbao/imageverify/certificate-fields.js";
import { identityMismatch, identityPolicy } from "../../src/targets/openbao/imageverify/identity.js";
import { checkKeyless } from "../../src/targets/openbao/imageverify/keyless.js";
import {
  CERTIFICATE_ANNOTATION,
  SIGNATURE_ANNOTATION,
  SIMPLE_SIGNING_TYPE,
} from "../../src/targets/openbao/imageverify/payload.js";
import { signatureTag } from "../../src/targets/openbao/imageverify/reference.js";
import { readTrustRoot } from "../../src/targets/openbao/imageverify/settings.js";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { ImageVerifier, type VerifySettings } from "../../src/targets/openbao/imageverify/verifier.js";
import { createKeylessCa } from "../support/keyless-ca.js";

// Keyless verification's pure parts against certificates made here (a private CA in Fulcio's
// role), and the verifier against an in-memory registry with an injected clock. Real cosign's
// verdicts on the same cases are compared in integration/openbao-image-verification.

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const ISSUER = "https://issuer.example.test";
const SUBJECT = "https://git.example.test/platform/openbao/.github/workflows/release.yml@refs/tags/v1";
const HOUR = 3600_000;
const NOW = Date.parse("2026-12-06T12:00:00Z");

function signer(): { pub: string; priv: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { pub: publicKey.export({ format: "pem", type: "spki" }).toString(), priv: privateKey };
}

const valid = { notBefore: new Date(NOW - 60_000), notAfter: new Date(NOW + HOUR) };
const claim = (digest: string) =>
  Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": "r.example/app" },
        image: { "docker-manifest-digest": digest },
        type: "cosign container image signature",
      },
      optional: null,
    }),
  );

describe("keyless: what a signing certificate says", () => {
  it("reads the issuer from Fulcio's v2 extension, else the legacy one, and the SANs in cosign's order", () => {
    const ca = createKeylessCa("fulcio", new Date(NOW));
    const s = signer();
    const both = new X509Certificate(
      ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid }),
    );
    assert.deepEqual(signerIdentity(both), { issuer: ISSUER, subjects: [SUBJECT] });
    const v1 = new X509Certificate(
      ca.issue({
        publicKeyPem: s.pub,
        issuer: "https://v1.example",
        subject: "a@b.example",
        ...valid,
        issuerExtensions: "v1",
      }),
    );
    assert.deepEqual(signerIdentity(v1), { issuer: "https://v1.example", subjects: ["a@b.example"] });
    // A certificate with every SAN kind cosign reads, and no issuer extension at all.
    const caKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pem = signCertificate({
      subject: sequence(),
      issuer: sequence(),
      spki: caKey.publicKey.export({ type: "spki", format: "der" }),
      signingKey: caKey.privateKey,
      ...valid,
      extensions: [
        extension(
          "2.5.29.17",
          true,
          sequence(
            implicit(6, Buffer.from("https://u.example/x")),
            implicit(1, Buffer.from("e@example.test")),
            implicit(2, Buffer.from("dns.example.test")),
            implicit(7, Buffer.from([10, 0, 0, 1])),
            implicit(7, Buffer.from("20010db8000000000000000000000001", "hex")),
            // otherName: Fulcio's username SAN.
            Buffer.concat([
              Buffer.from([0xa0]),
              (() => {
                const body = Buffer.concat([
                  oid("1.3.6.1.4.1.57264.1.7"),
                  Buffer.from([0xa0]),
                  lenOf(utf8String("alice")),
                  utf8String("alice"),
                ]);
                return Buffer.concat([lenOf(body), body]);
              })(),
            ]),
          ),
        ),
      ],
    });
    assert.deepEqual(signerIdentity(new X509Certificate(pem)), {
      subjects: [
        "dns.example.test",
        "e@example.test",
        "10.0.0.1",
        "2001:db8::1",
        "https://u.example/x",
        "alice",
      ],
    });
  });
});

/** A DER length prefix for `content` (short or long form), for the hand-built otherName above. */
function lenOf(content: Buffer): Buffer {
  const n = content.length;
  if (n < 0x80) return Buffer.from([n]);
  return Buffer.from([0x81, n]);
}

describe("keyless: the accepted identity", () => {
  const who = { issuer: ISSUER, subjects: [SUBJECT] };
  const field = "spec.imageVerification";

  it("takes upstream's pairs only, the exact pair first, and matches patterns anywhere as cosign does", () => {
    assert.equal(identityPolicy({ issuer: ISSUER }, field), undefined);
    assert.equal(identityPolicy({ issuer: ISSUER, subjectRegExp: "x" }, field), undefined);
    const both = identityPolicy(
      { issuer: ISSUER, subject: SUBJECT, issuerRegExp: "nomatch", subjectRegExp: "nomatch" },
      field,
    )!;
    assert.equal(both.kind, "exact");
    assert.equal(identityMismatch(both, who, field), undefined);
    const loose = identityPolicy({ issuerRegExp: "example", subjectRegExp: "release\\.yml" }, field)!;
    assert.equal(identityMismatch(loose, who, field), undefined, "unanchored: found inside the value");
    const anchored = identityPolicy({ issuerRegExp: "^example", subjectRegExp: "release\\.yml" }, field)!;
    assert.match(
      identityMismatch(anchored, who, field)!,
      /does not match spec\.imageVerification\.issuerRegExp "\^example"/,
    );
    assert.match(
      identityMismatch(identityPolicy({ issuer: ISSUER, subject: "other" }, field)!, who, field)!,
      /subject \(".*"\) is not spec\.imageVerification\.subject "other"/,
    );
    assert.match(identityMismatch(both, { subjects: [SUBJECT] }, field)!, /names no OIDC issuer/);
  });

  it("refuses a pattern that is not RE2 or not valid, naming the field", () => {
    assert.throws(
      () => identityPolicy({ issuerRegExp: "(?=x)", subjectRegExp: "y" }, field),
      /spec\.imageVerification\.issuerRegExp uses lookaround/,
    );
    assert.throws(
      () => identityPolicy({ issuerRegExp: "x", subjectRegExp: "(a" }, field),
      /spec\.imageVerification\.subjectRegExp is not a valid regular expression/,
    );
  });
});

describe("keyless: the trusted root", () => {
  it("reads a Sigstore trusted root and refuses what is not one, naming where it came from", () => {
    const ca = createKeylessCa("fulcio", new Date(NOW));
    const root = parseTrustRoot(ca.trustedRootJson(), "cm");
    assert.equal(root.authorities.length, 1);
    assert.equal(root.authorities[0]!.certificates[0]!.ca, true);
    assert.deepEqual(root.ctLogs, []);
    assert.throws(() => parseTrustRoot("{", "cm"), /cm is not JSON/);
    assert.throws(() => parseTrustRoot("{}", "cm"), /cm: mediaType/);
    const doc = JSON.parse(ca.trustedRootJson());
    doc.certificateAuthorities = [];
    assert.throws(
      () => parseTrustRoot(JSON.stringify(doc), "cm"),
      /lists neither certificateAuthorities nor tlogs/,
    );
    doc.certificateAuthorities = [{ certChain: { certificates: [{ rawBytes: "AAAA" }] } }];
    assert.throws(
      () => parseTrustRoot(JSON.stringify(doc), "cm"),
      /certificateAuthorities\[0\]\.certChain\.certificates\[0\]\.rawBytes is not a DER certificate/,
    );
  });

  it("is read from the operator's ConfigMap, which must exist and hold trusted_root.json", async () => {
    const ca = createKeylessCa("fulcio", new Date(NOW));
    const objects = new Map<string, unknown>([
      ["ops/root", { metadata: { name: "root" }, data: { "trusted_root.json": ca.trustedRootJson() } }],
      ["ops/empty", { metadata: { name: "empty" }, data: {} }],
    ]);
    const reader = {
      get: async (type: unknown, name: string, ns?: string) => {
        assert.equal(type, CONFIGMAP);
        return objects.get(`${ns}/${name}`) as never;
      },
    };
    const root = await readTrustRoot(reader, { namespace: "ops", name: "root" });
    assert.equal(root.authorities.length, 1);
    await assert.rejects(
      readTrustRoot(reader, { namespace: "ops", name: "gone" }),
      /ConfigMap ops\/gone does not exist/,
    );
    await assert.rejects(
      readTrustRoot(reader, { namespace: "ops", name: "empty" }),
      /has no trusted_root\.json key/,
    );
  });

  it("is named in the operator's configuration by namespace and name, both required", () => {
    const on = parseOpenBaoConfig(
      { imageVerification: { trustedRootConfigMap: { namespace: "ops", name: "sigstore-root" } } },
      "targets.openbao",
    );
    assert.deepEqual(on.trustedRootConfigMap, { namespace: "ops", name: "sigstore-root" });
    assert.equal(parseOpenBaoConfig({}, "targets.openbao").trustedRootConfigMap, undefined);
    assert.throws(
      () =>
        parseOpenBaoConfig({ imageVerification: { trustedRootConfigMap: { name: "x" } } }, "targets.openbao"),
      /targets\.openbao\.imageVerification\.trustedRootConfigMap\.namespace/,
    );
  });
});

describe("keyless: one signature", () => {
  const ca = createKeylessCa("fulcio", new Date(NOW));
  const trustRoot = parseTrustRoot(ca.trustedRootJson(), "cm");
  const s = signer();
  const payload = claim(`sha256:${"a".repeat(64)}`);
  const sig = sign("sha256", payload, s.priv);
  const policy = identityPolicy({ issuer: ISSUER, subject: SUBJECT }, "spec.imageVerification")!;
  const check = (cert: string | undefined, now = NOW, signature = sig) =>
    checkKeyless(cert, payload, signature, { policy, trustRoot, field: "spec.imageVerification", now });

  it("admits the right signer's certificate and says until when", () => {
    const cert = ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid });
    assert.deepEqual(check(cert), { ok: true, notAfter: valid.notAfter.getTime() });
  });

  it("refuses each way a certificate can fail, saying which", () => {
    const cert = ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid });
    const why = (v: ReturnType<typeof check>) => (v.ok ? "admitted" : v.why);
    assert.match(why(check(undefined)), /carries no certificate/);
    assert.match(why(check("not pem")), /not a PEM X\.509 certificate/);
    assert.match(why(check(cert, NOW + 2 * HOUR)), /the certificate expired at/);
    assert.match(why(check(cert, NOW - HOUR)), /not valid before/);
    assert.match(
      why(check(cert, NOW, sign("sha256", Buffer.from("other"), s.priv))),
      /does not verify with the certificate's key/,
    );
    const other = createKeylessCa("other", new Date(NOW));
    assert.match(
      why(check(other.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid }))),
      /does not chain to a certificate authority of the trusted root/,
    );
    assert.match(
      why(
        check(ca.issue({ publicKeyPem: s.pub, issuer: "https://evil.example", subject: SUBJECT, ...valid })),
      ),
      /OIDC issuer "https:\/\/evil\.example" is not spec\.imageVerification\.issuer/,
    );
    // Through an intermediate, as public Fulcio issues: admitted when the root's path length allows
    // one CA below it, refused when it allows none (as Go's x509 refuses it).
    for (const [rootPathLength, expected] of [
      [1, "admitted"],
      [0, "pathLenConstraint 0"],
    ] as const) {
      const layered = createKeylessCa("layered", new Date(NOW), { intermediate: { rootPathLength } });
      const verdict = checkKeyless(
        layered.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid }),
        payload,
        sig,
        {
          policy,
          trustRoot: parseTrustRoot(layered.trustedRootJson(), "cm"),
          field: "spec.imageVerification",
          now: NOW,
        },
      );
      assert.match(why(verdict), new RegExp(expected));
    }
    // Issued before the trusted root's CA certificate was valid.
    const early = { notBefore: new Date(NOW - 3 * 24 * HOUR), notAfter: new Date(NOW + HOUR) };
    assert.match(
      why(check(ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...early }))),
      /was not valid when the certificate was issued/,
    );
  });
});

/** A registry in memory holding one image and one keyless signature layer. */
function registryWith(certificatePem: string, priv: KeyObject) {
  const config = Buffer.from("{}");
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha(config), size: 2 },
      layers: [],
    }),
  );
  const digest = sha(manifest);
  const payload = claim(digest);
  const sigManifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      layers: [
        {
          mediaType: SIMPLE_SIGNING_TYPE,
          digest: sha(payload),
          size: payload.length,
          annotations: {
            [SIGNATURE_ANNOTATION]: sign("sha256", payload, priv).toString("base64"),
            [CERTIFICATE_ANNOTATION]: certificatePem,
          },
        },
      ],
    }),
  );
  const files = new Map<string, Buffer>([
    ["manifests/1.0", manifest],
    [`manifests/${digest}`, manifest],
    [`manifests/${signatureTag(digest)}`, sigManifest],
    [`blobs/${sha(payload)}`, payload],
  ]);
  const requests: string[] = [];
  const fetch = async (input: string | URL | Request): Promise<Response> => {
    const path = new URL(String(input)).pathname.replace(/^\/v2\/app\//, "");
    requests.push(path);
    const body = files.get(path);
    return body ? new Response(new Uint8Array(body)) : new Response("", { status: 404 });
  };
  return { digest, fetch, requests };
}

describe("keyless: the verifier", () => {
  const ca = createKeylessCa("fulcio", new Date(NOW));
  const trustRoot = parseTrustRoot(ca.trustedRootJson(), "cm");
  const settings = (extra: Partial<VerifySettings> = {}): VerifySettings => ({
    field: "spec.imageVerification",
    issuer: ISSUER,
    subject: SUBJECT,
    ignoreTlog: true,
    trustRoot,
    ...extra,
  });

  it("pins the image, and trusts the cached verdict no longer than the certificate", async () => {
    const s = signer();
    const reg = registryWith(
      ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid }),
      s.priv,
    );
    let now = NOW;
    const v = new ImageVerifier({ fetch: reg.fetch, now: () => now });
    const image = `127.0.0.1:5000/app@${reg.digest}`;
    const ok = await v.verify(image, settings());
    assert.equal(ok.pinned, image);
    assert.equal((await v.verify(image, settings())).cached, true);
    now = NOW + 2 * HOUR;
    await assert.rejects(
      v.verify(image, settings()),
      /no keyless signature is accepted \(1 checked\): the certificate expired at/,
    );
  });

  it("refuses keyless settings it cannot honour before asking the registry anything", async () => {
    const s = signer();
    const reg = registryWith(
      ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid }),
      s.priv,
    );
    const v = new ImageVerifier({ fetch: reg.fetch, now: () => NOW });
    const image = `127.0.0.1:5000/app@${reg.digest}`;
    const { trustRoot: _none, ...withoutRoot } = settings();
    await assert.rejects(
      v.verify(image, withoutRoot),
      /needs a trusted root, and the operator has none: set targets\.openbao\.imageVerification\.trustedRootConfigMap/,
    );
    await assert.rejects(
      v.verify(image, settings({ ignoreTlog: false })),
      /spec\.imageVerification\.ignoreTlog is false/,
    );
    await assert.rejects(
      v.verify(
        image,
        settings({
          subject: undefined,
          subjectRegExp: "(",
          issuer: undefined,
          issuerRegExp: "x",
        } as Partial<VerifySettings>),
      ),
      /spec\.imageVerification\.subjectRegExp is not a valid regular expression/,
    );
    assert.deepEqual(reg.requests, [], "nothing was asked of the registry");
  });

  it("a key takes precedence over a keyless identity, as upstream has it", async () => {
    const s = signer();
    const reg = registryWith(
      ca.issue({ publicKeyPem: s.pub, issuer: ISSUER, subject: SUBJECT, ...valid }),
      s.priv,
    );
    const v = new ImageVerifier({ fetch: reg.fetch, now: () => NOW });
    // The signature was made with s's key: with publicKey set, it is checked with that key alone.
    const ok = await v.verify(
      `127.0.0.1:5000/app@${reg.digest}`,
      settings({ publicKey: s.pub, subject: "ignored" }),
    );
    assert.equal(ok.digest, reg.digest);
  });
});
