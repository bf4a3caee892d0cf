import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, type KeyObject, sign, X509Certificate } from "node:crypto";
import { describe, it } from "node:test";
import {
  BUNDLE_V03_TYPE,
  bundleSignature,
  preAuthEncoding,
  SIGN_PREDICATE,
  statementDigests,
} from "../../src/targets/openbao/imageverify/bundle.js";
import { SIGNATURE_ANNOTATION, SIMPLE_SIGNING_TYPE } from "../../src/targets/openbao/imageverify/payload.js";
import { signatureTag } from "../../src/targets/openbao/imageverify/reference.js";
import { bundleReferrers, referrersTag } from "../../src/targets/openbao/imageverify/referrers.js";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { ImageVerifier, type VerifySettings } from "../../src/targets/openbao/imageverify/verifier.js";
import { createKeylessCa } from "../support/keyless-ca.js";

// cosign 3's signatures — Sigstore bundles stored as OCI referrers — read by the verifier from an
// in-memory registry, with and without the referrers API, next to cosign 2's `.sig` tag. The
// bundles are laid out as cosign writes them (the real cosign is in the integration test).

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const OCI = "application/vnd.oci.image.manifest.v1+json";
const INDEX = "application/vnd.oci.image.index.v1+json";
const EMPTY = "application/vnd.oci.empty.v1+json";
const HOST = "registry.example";
const REPO = "team/openbao";

function keyPair(): { pub: string; priv: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { pub: publicKey.export({ format: "pem", type: "spki" }).toString(), priv: privateKey };
}

const statement = (digest: string, predicateType = SIGN_PREDICATE) =>
  Buffer.from(
    JSON.stringify({
      _type: "https://in-toto.io/Statement/v0.1",
      predicateType,
      subject: [{ name: `${HOST}/${REPO}`, digest: { sha256: digest.slice("sha256:".length) } }],
      predicate: {},
    }),
  );

interface BundleOptions {
  /** The digest the statement names (the image's own by default). */
  claimFor?: string;
  predicateType?: string;
  /** DER of the signing certificate (keyless); a key hint otherwise. */
  certificateDer?: Buffer;
}

function bundle(digest: string, priv: KeyObject, o: BundleOptions = {}): Buffer {
  const payload = statement(o.claimFor ?? digest, o.predicateType);
  const type = "application/vnd.in-toto+json";
  const sig = sign("sha256", preAuthEncoding(type, payload), priv).toString("base64");
  return Buffer.from(
    JSON.stringify({
      mediaType: BUNDLE_V03_TYPE,
      verificationMaterial: o.certificateDer
        ? { certificate: { rawBytes: o.certificateDer.toString("base64") } }
        : { publicKey: { hint: "not used" } },
      dsseEnvelope: { payload: payload.toString("base64"), payloadType: type, signatures: [{ sig }] },
    }),
  );
}

/** A registry in memory: manifests, blobs, and the referrers API when `referrersApi` is on. */
class Registry {
  readonly manifests = new Map<string, Buffer>();
  readonly blobs = new Map<string, Buffer>();
  readonly requests: string[] = [];
  /** Referrer manifests by subject digest, as the API lists them. */
  private readonly referrers = new Map<string, { digest: string; artifactType: string }[]>();

  constructor(readonly referrersApi: boolean) {}

  pushImage(marker: string): string {
    const config = Buffer.from(JSON.stringify({ marker }));
    this.blobs.set(sha(config), config);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI,
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha(config), size: 2 },
        layers: [],
      }),
    );
    this.manifests.set(sha(manifest), manifest);
    return sha(manifest);
  }

  /** Attaches a bundle as cosign does; without the API, into the fallback tag's index (labelled as cosign 2.x labels it). */
  attach(digest: string, bundleBytes: Buffer): void {
    this.blobs.set(sha(bundleBytes), bundleBytes);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI,
        artifactType: BUNDLE_V03_TYPE,
        config: { mediaType: EMPTY, digest: sha(Buffer.from("{}")), size: 2 },
        layers: [{ mediaType: BUNDLE_V03_TYPE, digest: sha(bundleBytes), size: bundleBytes.length }],
        subject: { mediaType: OCI, digest, size: 1 },
      }),
    );
    this.manifests.set(sha(manifest), manifest);
    const list = this.referrers.get(digest) ?? [];
    list.push({ digest: sha(manifest), artifactType: this.referrersApi ? BUNDLE_V03_TYPE : EMPTY });
    this.referrers.set(digest, list);
    if (!this.referrersApi) this.manifests.set(referrersTag(digest), this.index(digest));
  }

  /** cosign 2's signature under the `.sig` tag. */
  signLegacy(digest: string, priv: KeyObject): void {
    const payload = Buffer.from(
      JSON.stringify({
        critical: {
          identity: {},
          image: { "docker-manifest-digest": digest },
          type: "cosign container image signature",
        },
        optional: null,
      }),
    );
    this.blobs.set(sha(payload), payload);
    const layer = {
      mediaType: SIMPLE_SIGNING_TYPE,
      digest: sha(payload),
      size: payload.length,
      annotations: { [SIGNATURE_ANNOTATION]: sign("sha256", payload, priv).toString("base64") },
    };
    this.manifests.set(
      signatureTag(digest),
      Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI, layers: [layer] })),
    );
  }

  private index(digest: string): Buffer {
    const manifests = (this.referrers.get(digest) ?? []).map((r) => ({ mediaType: OCI, size: 1, ...r }));
    return Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests }));
  }

  readonly fetch = async (input: string | URL | Request): Promise<Response> => {
    const url = new URL(String(input));
    this.requests.push(url.pathname);
    const m = /^\/v2\/(.+)\/(manifests|blobs|referrers)\/([^/]+)$/.exec(url.pathname);
    if (!m || m[1] !== REPO) return new Response("", { status: 404 });
    if (m[2] === "referrers")
      return this.referrersApi
        ? new Response(new Uint8Array(this.index(m[3]!)), { status: 200 })
        : new Response("", { status: 404 });
    const body = m[2] === "manifests" ? this.manifests.get(m[3]!) : this.blobs.get(m[3]!);
    return body ? new Response(new Uint8Array(body), { status: 200 }) : new Response("", { status: 404 });
  };
}

const keyed = (publicKey: string): VerifySettings => ({
  field: "spec.imageVerification",
  publicKey,
  ignoreTlog: true,
});
const ref = (digest: string) => `${HOST}/${REPO}@${digest}`;

describe("Sigstore bundles, read", () => {
  it("DSSE's pre-authentication encoding is the spec's", () => {
    assert.equal(
      preAuthEncoding("http://example.com/HelloWorld", Buffer.from("hello world")).toString(),
      "DSSEv1 29 http://example.com/HelloWorld 11 hello world",
    );
  });

  it("takes a DSSE bundle's leaf certificate from v0.3's certificate or v0.1's chain, and refuses what names no image", () => {
    const ca = createKeylessCa("bundle-read");
    const key = keyPair();
    const now = Date.now();
    const der = new X509Certificate(
      ca.issue({
        publicKeyPem: key.pub,
        issuer: "https://issuer.test",
        subject: "me@example.test",
        notBefore: new Date(now - 1000),
        notAfter: new Date(now + 60_000),
      }),
    ).raw;
    const d = sha(Buffer.from("image"));
    const v3 = bundleSignature(bundle(d, key.priv, { certificateDer: der }));
    assert.equal(new X509Certificate(v3.certificate!).raw.equals(der), true);
    const doc = JSON.parse(bundle(d, key.priv).toString());
    doc.mediaType = "application/vnd.dev.sigstore.bundle+json;version=0.1";
    doc.verificationMaterial = {
      x509CertificateChain: { certificates: [{ rawBytes: der.toString("base64") }] },
    };
    const v1 = bundleSignature(Buffer.from(JSON.stringify(doc)));
    assert.equal(new X509Certificate(v1.certificate!).raw.equals(der), true);
    assert.deepEqual(statementDigests(v1.payload), [d]);
    assert.throws(
      () =>
        bundleSignature(
          Buffer.from(JSON.stringify({ ...doc, dsseEnvelope: undefined, messageSignature: {} })),
        ),
      /messageSignature, which names no image/,
    );
    assert.throws(
      () => statementDigests(statement(d, "https://cyclonedx.org/bom")),
      /an attestation \(https:\/\/cyclonedx\.org\/bom\), not an image signature/,
    );
  });

  it("lists bundle referrers first, then unlabelled ones, and skips other artifacts", () => {
    const entry = (n: number, artifactType?: string) => ({
      mediaType: OCI,
      digest: `sha256:${String(n).repeat(64)}`,
      size: 1,
      ...(artifactType ? { artifactType } : {}),
    });
    const index = Buffer.from(
      JSON.stringify({
        manifests: [
          entry(1, EMPTY),
          entry(2, "application/vnd.cyclonedx+json"),
          entry(3, BUNDLE_V03_TYPE),
          entry(4),
        ],
      }),
    );
    assert.deepEqual(bundleReferrers(index), [entry(3).digest, entry(1).digest, entry(4).digest]);
  });
});

describe("the verifier on cosign 3 signatures", () => {
  for (const api of [true, false]) {
    const where = api ? "through the referrers API" : "through the sha256-<hex> fallback tag";
    it(`keyed, ${where}: the signer's bundle passes; another key's, an attestation's, another image's do not`, async () => {
      const reg = new Registry(api);
      const key = keyPair();
      const other = keyPair();
      const v = new ImageVerifier({ fetch: reg.fetch });
      const signed = reg.pushImage("signed");
      reg.attach(signed, bundle(signed, key.priv));
      assert.equal((await v.verify(ref(signed), keyed(key.pub))).digest, signed);

      const byOther = reg.pushImage("other");
      reg.attach(byOther, bundle(byOther, other.priv));
      await assert.rejects(
        v.verify(ref(byOther), keyed(key.pub)),
        /no signature verifies with spec\.imageVerification\.publicKey \(1 checked\)/,
      );

      // The right key, but an SBOM attestation: it says what is inside, not who released it.
      const attested = reg.pushImage("attested");
      reg.attach(attested, bundle(attested, key.priv, { predicateType: "https://cyclonedx.org/bom" }));
      await assert.rejects(
        v.verify(ref(attested), keyed(key.pub)),
        /an attestation \(https:\/\/cyclonedx\.org\/bom\), not an image signature/,
      );

      // A genuine bundle over another image, attached to this one.
      const copy = reg.pushImage("copy");
      reg.attach(copy, bundle(copy, key.priv, { claimFor: signed }));
      await assert.rejects(
        v.verify(ref(copy), keyed(key.pub)),
        new RegExp(`covers another image \\(${signed}\\)`),
      );

      const unsigned = reg.pushImage("unsigned");
      await assert.rejects(
        v.verify(ref(unsigned), keyed(key.pub)),
        /is not signed: no sha256-[0-9a-f]{64}\.sig in its repository and no Sigstore bundle among its referrers/,
      );
    });
  }

  it("both places: a passing bundle decides without reading .sig; a failing one does not veto a good .sig", async () => {
    const reg = new Registry(true);
    const key = keyPair();
    const v = new ImageVerifier({ fetch: reg.fetch });
    const both = reg.pushImage("both");
    reg.attach(both, bundle(both, key.priv));
    reg.signLegacy(both, keyPair().priv);
    assert.equal((await v.verify(ref(both), keyed(key.pub))).digest, both);
    assert.ok(!reg.requests.some((p) => p.endsWith(signatureTag(both))), "the .sig tag was not read");

    const legacyOnly = reg.pushImage("legacy wins");
    reg.attach(legacyOnly, bundle(legacyOnly, keyPair().priv));
    reg.signLegacy(legacyOnly, key.priv);
    assert.equal((await v.verify(ref(legacyOnly), keyed(key.pub))).digest, legacyOnly);
  });

  it("keyless: the bundle's certificate chains to the trusted root and names the accepted signer", async () => {
    const reg = new Registry(true);
    const ca = createKeylessCa("bundle-fulcio");
    const key = keyPair();
    const now = Date.now();
    const der = new X509Certificate(
      ca.issue({
        publicKeyPem: key.pub,
        issuer: "https://issuer.test",
        subject: "https://ci.test/release.yml@refs/tags/v1",
        notBefore: new Date(now - 1000),
        notAfter: new Date(now + 3600_000),
      }),
    ).raw;
    const d = reg.pushImage("keyless");
    reg.attach(d, bundle(d, key.priv, { certificateDer: der }));
    const settings = (subject: string): VerifySettings => ({
      field: "spec.imageVerification",
      issuer: "https://issuer.test",
      subject,
      ignoreTlog: true,
      trustRoot: parseTrustRoot(ca.trustedRootJson(), "trusted_root.json"),
    });
    const v = new ImageVerifier({ fetch: reg.fetch });
    assert.equal((await v.verify(ref(d), settings("https://ci.test/release.yml@refs/tags/v1"))).digest, d);
    await assert.rejects(
      v.verify(ref(d), settings("https://ci.test/release.yml@refs/tags/v2")),
      /no keyless signature is accepted \(1 checked\): the certificate's subject \("https:\/\/ci\.test\/release\.yml@refs\/tags\/v1"\) is not spec\.imageVerification\.subject/,
    );
    // A keyed bundle carries no certificate: not keyless.
    const keyedOnly = reg.pushImage("keyed only");
    reg.attach(keyedOnly, bundle(keyedOnly, key.priv));
    await assert.rejects(
      v.verify(ref(keyedOnly), settings("https://ci.test/release.yml@refs/tags/v1")),
      /carries no certificate/,
    );
  });
});
