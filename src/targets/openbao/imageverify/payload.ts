/**
 * cosign's signature artifact, read without trusting it: the manifest under the `.sig` tag lists one
 * layer per signature, each layer a "simple signing" payload naming the image digest it covers, its
 * annotations the base64 signature (and, when signed keylessly or with a transparency log, the
 * certificate and the log entry). Pure: bytes in, findings out.
 */

export const SIMPLE_SIGNING_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
export const SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
export const CERTIFICATE_ANNOTATION = "dev.sigstore.cosign/certificate";
export const BUNDLE_ANNOTATION = "dev.sigstore.cosign/bundle";
const SIGNATURE_KIND = "cosign container image signature";

/** One signature layer as the manifest describes it. */
export interface SignatureLayer {
  /** Digest of the payload blob, to fetch it and to check what was fetched. */
  digest: string;
  size: number;
  /** The raw signature over the payload bytes. */
  signature: Buffer;
  /** Present when the signer used a certificate (keyless). */
  certificate?: string;
  /** Present when the signature was logged in a transparency log. */
  bundle?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The signature layers of a `.sig` manifest; throws naming what is malformed. */
export function signatureLayers(manifestBytes: Buffer): SignatureLayer[] {
  let doc: unknown;
  try {
    doc = JSON.parse(manifestBytes.toString("utf8"));
  } catch {
    throw new Error("the signature manifest is not JSON");
  }
  if (!isObject(doc) || !Array.isArray(doc["layers"]))
    throw new Error("the signature manifest has no layers");
  const out: SignatureLayer[] = [];
  for (const layer of doc["layers"]) {
    if (!isObject(layer) || layer["mediaType"] !== SIMPLE_SIGNING_TYPE) continue;
    const annotations = isObject(layer["annotations"]) ? layer["annotations"] : {};
    const sig = annotations[SIGNATURE_ANNOTATION];
    const digest = layer["digest"];
    const size = layer["size"];
    if (typeof sig !== "string" || typeof digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(digest))
      continue;
    const cert = annotations[CERTIFICATE_ANNOTATION];
    const bundle = annotations[BUNDLE_ANNOTATION];
    out.push({
      digest,
      size: typeof size === "number" ? size : -1,
      signature: Buffer.from(sig, "base64"),
      ...(typeof cert === "string" && cert !== "" ? { certificate: cert } : {}),
      ...(typeof bundle === "string" && bundle !== "" ? { bundle } : {}),
    });
  }
  return out;
}

/**
 * The image digest a simple-signing payload claims to cover, after checking it is one; throws naming
 * what is wrong. The payload's other claims (docker-reference, optional annotations) are not
 * checked, as cosign does not check them by default: the digest is what binds the signature.
 */
export function signedDigest(payload: Buffer): string {
  let doc: unknown;
  try {
    doc = JSON.parse(payload.toString("utf8"));
  } catch {
    throw new Error("the signed payload is not JSON");
  }
  const critical = isObject(doc) ? doc["critical"] : undefined;
  if (!isObject(critical)) throw new Error("the signed payload has no critical section");
  if (critical["type"] !== SIGNATURE_KIND)
    throw new Error(`the signed payload's type is not "${SIGNATURE_KIND}"`);
  const image = critical["image"];
  const digest = isObject(image) ? image["docker-manifest-digest"] : undefined;
  if (typeof digest !== "string" || digest === "")
    throw new Error("the signed payload names no docker-manifest-digest");
  return digest;
}
