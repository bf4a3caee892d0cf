import { isBundleType } from "./bundle.js";

/**
 * Where cosign 3 keeps an image's signatures: OCI referrers of the image's manifest (OCI
 * distribution 1.1), listed by the registry's referrers API or, where the registry has none, by
 * the index under the fallback tag `sha256-<hex>` that the signer maintains. Each Sigstore bundle
 * is a manifest whose subject is the image and whose one layer is the bundle. Pure: bytes in,
 * descriptors out; what cannot be a bundle is skipped, not an error (an image may have SBOMs too).
 */

/** The empty config's media type: cosign 2.x's fallback index labels its bundle referrers with it. */
const EMPTY_CONFIG = "application/vnd.oci.empty.v1+json";
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const DIGEST = /^sha256:[0-9a-f]{64}$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function parse(bytes: Buffer, what: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  if (!isObject(doc)) throw new Error(`${what} is not an object`);
  return doc;
}

/** The fallback tag listing an image's referrers where the registry has no referrers API. */
export function referrersTag(digest: string): string {
  return digest.replace(":", "-");
}

/**
 * The referrer manifests that may hold a Sigstore bundle: those labelled as one, and those labelled
 * only by an empty config or not at all (confirmed from the manifest itself), bundles first.
 */
export function bundleReferrers(indexBytes: Buffer): string[] {
  const doc = parse(indexBytes, "the referrers index");
  const entries = Array.isArray(doc["manifests"]) ? doc["manifests"] : [];
  const labelled: string[] = [];
  const unlabelled: string[] = [];
  for (const e of entries) {
    if (!isObject(e) || typeof e["digest"] !== "string" || !DIGEST.test(e["digest"])) continue;
    if (e["mediaType"] !== undefined && e["mediaType"] !== OCI_MANIFEST) continue;
    const type = e["artifactType"];
    if (isBundleType(type)) labelled.push(e["digest"]);
    else if (type === undefined || type === "" || type === EMPTY_CONFIG) unlabelled.push(e["digest"]);
  }
  return [...labelled, ...unlabelled];
}

/**
 * The bundle layer's digest when the manifest is a Sigstore bundle referring to `subject`;
 * undefined when it is something else (an SBOM, another image's bundle).
 */
export function bundleLayer(manifestBytes: Buffer, subject: string): string | undefined {
  const doc = parse(manifestBytes, "a referrer manifest");
  const refersTo = isObject(doc["subject"]) ? doc["subject"]["digest"] : undefined;
  if (refersTo !== subject) return undefined;
  const layers = Array.isArray(doc["layers"]) ? doc["layers"] : [];
  const layer = layers.find((l) => isObject(l) && isBundleType(l["mediaType"]));
  if (!isObject(layer)) return undefined;
  const digest = layer["digest"];
  return typeof digest === "string" && DIGEST.test(digest) ? digest : undefined;
}
