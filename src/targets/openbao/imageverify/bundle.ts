import { bundleEntry, type LogEntry } from "./rekor.js";

/**
 * cosign 3's image signature, read without trusting it: a Sigstore bundle (protobuf-specs'
 * `Bundle`, as JSON) stored as an OCI referrer of the image. The signature is a DSSE envelope over
 * an in-toto Statement whose predicateType says "this is an image signature" and whose subject
 * names the image digest; the verification material is the signer's certificate (keyless) or only
 * a hint of the key (keyed), and the transparency-log entries that logged it. Pure: bytes in, findings out; throws naming what is malformed.
 */

export const BUNDLE_MEDIA_TYPE_PREFIX = "application/vnd.dev.sigstore.bundle";
/** The artifactType cosign 3 gives the referrer (and the media type of its one layer). */
export const BUNDLE_V03_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";
/** The predicate of a cosign 3 image signature; any other predicate is an attestation, not a signature. */
export const SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1";
const IN_TOTO_PAYLOAD = "application/vnd.in-toto+json";
const STATEMENT_TYPES = new Set(["https://in-toto.io/Statement/v0.1", "https://in-toto.io/Statement/v1"]);

export const isBundleType = (t: unknown): boolean =>
  typeof t === "string" && t.startsWith(BUNDLE_MEDIA_TYPE_PREFIX);

export interface BundleSignature {
  /** The bytes the signature is over: DSSE's pre-authentication encoding of the payload. */
  signed: Buffer;
  signature: Buffer;
  /** The in-toto Statement the envelope carries. */
  payload: Buffer;
  /** The signing certificate as PEM, when the bundle carries one (keyless). */
  certificate?: string;
  /** `verificationMaterial.tlogEntries`, read when a transparency-log check asks for them; throws when malformed. */
  logEntries(): LogEntry[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** DSSE v1's PAE: "DSSEv1" SP len(type) SP type SP len(body) SP body, lengths in ASCII decimal. */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, "ascii"),
    type,
    Buffer.from(` ${payload.length} `, "ascii"),
    payload,
  ]);
}

const pem = (der: string): string =>
  `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)?.join("\n") ?? ""}\n-----END CERTIFICATE-----\n`;

/** The bundle format's version from its media type (`…bundle+json;version=0.2`, `…bundle.v0.3+json`); 0 when unnamed. */
export function bundleVersion(mediaType: string): number {
  const m = /version=(\d+\.\d+)/.exec(mediaType) ?? /\.v(\d+\.\d+)\+json/.exec(mediaType);
  return m ? Number(m[1]) : 0;
}

/** The leaf certificate of the verification material (v0.3's `certificate`, or v0.1/0.2's chain). */
function leafCertificate(material: Record<string, unknown>): string | undefined {
  const single = isObject(material["certificate"]) ? material["certificate"]["rawBytes"] : undefined;
  if (typeof single === "string" && single !== "") return pem(single);
  const chain = isObject(material["x509CertificateChain"])
    ? material["x509CertificateChain"]["certificates"]
    : undefined;
  const first = Array.isArray(chain) && isObject(chain[0]) ? chain[0]["rawBytes"] : undefined;
  return typeof first === "string" && first !== "" ? pem(first) : undefined;
}

/** The one DSSE signature of a bundle; throws saying what makes it no image signature. */
export function bundleSignature(bytes: Buffer): BundleSignature {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new Error("the Sigstore bundle is not JSON");
  }
  if (!isObject(doc) || !isBundleType(doc["mediaType"]))
    throw new Error(`the Sigstore bundle's mediaType is not ${BUNDLE_MEDIA_TYPE_PREFIX}.*`);
  const material = isObject(doc["verificationMaterial"]) ? doc["verificationMaterial"] : {};
  const envelope = doc["dsseEnvelope"];
  if (!isObject(envelope))
    throw new Error(
      isObject(doc["messageSignature"])
        ? "the Sigstore bundle holds a messageSignature, which names no image (cosign signs images with a DSSE envelope)"
        : "the Sigstore bundle holds no dsseEnvelope",
    );
  const payloadType = envelope["payloadType"];
  const payload = envelope["payload"];
  const signatures = envelope["signatures"];
  if (payloadType !== IN_TOTO_PAYLOAD)
    throw new Error(`the bundle's DSSE payloadType is not ${IN_TOTO_PAYLOAD}`);
  if (typeof payload !== "string") throw new Error("the bundle's DSSE envelope has no payload");
  // A bundle carries exactly one signature (protobuf-specs); more would be ambiguous about the key.
  if (!Array.isArray(signatures) || signatures.length !== 1 || !isObject(signatures[0]))
    throw new Error("the bundle's DSSE envelope does not hold exactly one signature");
  const sig = signatures[0]["sig"];
  if (typeof sig !== "string" || sig === "") throw new Error("the bundle's DSSE signature is empty");
  const body = Buffer.from(payload, "base64");
  const certificate = leafCertificate(material);
  const entries = Array.isArray(material["tlogEntries"]) ? (material["tlogEntries"] as unknown[]) : [];
  return {
    signed: preAuthEncoding(payloadType, body),
    signature: Buffer.from(sig, "base64"),
    payload: body,
    ...(certificate ? { certificate } : {}),
    logEntries: () => {
      const out = entries.map((e, i) => bundleEntry(e, `the bundle's tlogEntries[${i}]`));
      // From v0.2 a bundle's entries must carry an inclusion proof (protobuf-specs; sigstore-go refuses the bundle).
      if (bundleVersion(doc["mediaType"] as string) >= 0.2 && out.some((e) => !e.inclusionProof))
        throw new Error("inclusion proof missing in bundle (required for bundle v0.2)");
      return out;
    },
  };
}

/**
 * The image digests an in-toto Statement signs as an image signature (`sha256:<hex>` each); throws
 * when it is not one: another predicate (an SBOM or provenance attestation signed with the same key
 * says nothing about who released the image), or no subject.
 */
export function statementDigests(payload: Buffer): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(payload.toString("utf8"));
  } catch {
    throw new Error("the bundle's in-toto Statement is not JSON");
  }
  if (!isObject(doc) || !STATEMENT_TYPES.has(doc["_type"] as string))
    throw new Error("the bundle's payload is not an in-toto Statement");
  if (doc["predicateType"] !== SIGN_PREDICATE)
    throw new Error(
      `the bundle is an attestation (${String(doc["predicateType"])}), not an image signature (${SIGN_PREDICATE})`,
    );
  const subjects = Array.isArray(doc["subject"]) ? doc["subject"] : [];
  const out: string[] = [];
  for (const s of subjects) {
    const hex = isObject(s) && isObject(s["digest"]) ? s["digest"]["sha256"] : undefined;
    if (typeof hex === "string" && /^[0-9a-f]{64}$/.test(hex)) out.push(`sha256:${hex}`);
  }
  if (out.length === 0) throw new Error("the bundle's in-toto Statement names no sha256 subject");
  return out;
}
