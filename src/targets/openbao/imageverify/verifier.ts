import { createHash } from "node:crypto";
import { signatureLayers, signedDigest } from "./payload.js";
import type { RegistryCredentials } from "./pull-secrets.js";
import { pinnedReference, registryReference, signatureTag } from "./reference.js";
import { type Fetch, RegistryClient, RegistryError } from "./registry.js";
import { keyFingerprint, loadPublicKey, verifiesWith } from "./signature.js";

/**
 * Checks that an image is signed with cosign by the holder of a public key, in TypeScript and
 * against the registry alone: the image reference is resolved to its manifest digest, the signature
 * artifact under cosign's `.sig` tag is read, each signature is checked over its payload with the
 * key, and the payload must name that same digest. What passed is cached by image reference and key,
 * so a pass that changes nothing asks the registry nothing.
 */

/** What to verify with, as read from imageVerification / operatorImageVerification. */
export interface VerifySettings {
  /** The spec path the settings come from, for messages: `spec.imageVerification`. */
  field: string;
  publicKey?: string;
  issuer?: string;
  subject?: string;
  issuerRegExp?: string;
  subjectRegExp?: string;
  ignoreTlog: boolean;
  /** Registry host → credentials, from the settings' imagePullSecrets. */
  credentials?: ReadonlyMap<string, RegistryCredentials>;
}

export interface Verified {
  /** The manifest digest that was verified. */
  digest: string;
  /** The image pinned to that digest (`name@sha256:…`): what the pods run. */
  pinned: string;
  /** Whether the answer came from the cache. */
  cached: boolean;
}

/** A verification that did not pass; `transient` when the registry could not be asked. */
export class ImageVerificationError extends Error {
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
  }
}

export interface VerifierOptions {
  fetch?: Fetch;
  now?: () => number;
  /** How long a tag's verified digest is trusted before the tag is looked up again. */
  tagTtlMs?: number;
  maxEntries?: number;
}

const MAX_PAYLOAD_BYTES = 1024 * 1024;
const MAX_SIGNATURES = 32;

interface Entry {
  digest: string;
  pinned: string;
  /** undefined for a digest reference: what a digest names cannot change. */
  expires?: number;
}

export class ImageVerifier {
  private readonly cache = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly tagTtlMs: number;
  private readonly maxEntries: number;

  constructor(private readonly opts: VerifierOptions = {}) {
    this.now = opts.now ?? Date.now;
    // Upstream re-resolves a tag after five minutes: a moved tag is noticed, a quiet pass is free.
    this.tagTtlMs = opts.tagTtlMs ?? 5 * 60_000;
    this.maxEntries = opts.maxEntries ?? 256;
  }

  async verify(image: string, settings: VerifySettings, signal?: AbortSignal): Promise<Verified> {
    const key = keyOf(settings);
    const ref = registryReference(image);
    if (typeof ref === "string") throw new ImageVerificationError(`image ${image}: ${ref}`);
    const cacheKey = `${image}\n${keyFingerprint(key)}\n${credentialsId(settings, ref.host)}`;
    const hit = this.cache.get(cacheKey);
    if (hit && (hit.expires === undefined || hit.expires > this.now())) {
      // Refreshed as most recently used.
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, hit);
      return { digest: hit.digest, pinned: hit.pinned, cached: true };
    }
    const credentials = settings.credentials?.get(ref.host);
    const client = new RegistryClient(ref, {
      ...(credentials ? { credentials } : {}),
      ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}),
      ...(signal ? { signal } : {}),
    });
    try {
      const digest = await this.resolve(client, ref.digest ?? ref.tag ?? "latest", image);
      await checkSignatures(client, image, digest, key, settings.field);
      const entry: Entry = {
        digest,
        pinned: pinnedReference(ref, digest),
        ...(ref.digest ? {} : { expires: this.now() + this.tagTtlMs }),
      };
      this.remember(cacheKey, entry);
      return { digest, pinned: entry.pinned, cached: false };
    } catch (e) {
      // A registry that does not answer changes nothing about a digest already verified: the tag's
      // last verified digest stays in use, so an outage neither blocks nor rolls the pods to the tag.
      if (e instanceof RegistryError && e.transient && hit)
        return { digest: hit.digest, pinned: hit.pinned, cached: true };
      if (e instanceof RegistryError)
        throw new ImageVerificationError(`image ${image}: ${e.message}`, e.transient);
      throw e;
    }
  }

  /** Forgets every cached verification (settings changed in a way the key does not show). */
  clear(): void {
    this.cache.clear();
  }

  private async resolve(client: RegistryClient, reference: string, image: string): Promise<string> {
    const manifest = await client.manifest(reference);
    if (!manifest) throw new ImageVerificationError(`image ${image}: the registry has no manifest for it`);
    return manifest.digest;
  }

  private remember(key: string, entry: Entry): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }
}

/**
 * The key the settings verify with, after refusing what cannot be verified here: keyless identities
 * (they need Sigstore's Fulcio and Rekor trust roots, which this operator does not carry) and a key
 * with the transparency-log check left on (it needs Rekor's key for the same reason). Refused, not
 * skipped: a check that silently did less than asked would pass images it should not.
 */
function keyOf(settings: VerifySettings) {
  const { field } = settings;
  if (!settings.publicKey) {
    const keyless = settings.issuer || settings.subject || settings.issuerRegExp || settings.subjectRegExp;
    throw new ImageVerificationError(
      keyless
        ? `${field}: keyless verification (issuer/subject) is not supported by this operator: it needs Sigstore's Fulcio and Rekor trust roots, which it does not carry; sign the image with a key and set ${field}.publicKey`
        : `${field}: enabled without publicKey or issuer and subject`,
    );
  }
  let key: ReturnType<typeof loadPublicKey>;
  try {
    key = loadPublicKey(settings.publicKey, `${field}.publicKey`);
  } catch (e) {
    throw new ImageVerificationError((e as Error).message);
  }
  if (!settings.ignoreTlog)
    throw new ImageVerificationError(
      `${field}.ignoreTlog is false, but this operator cannot check a transparency-log entry (it carries no Rekor key): set ignoreTlog: true to verify against ${field}.publicKey alone`,
    );
  return key;
}

/** Which credentials were used for the host, as a hash: part of the cache key, never the values. */
function credentialsId(settings: VerifySettings, host: string): string {
  const c = settings.credentials?.get(host);
  if (!c) return "-";
  return createHash("sha256").update(`${c.username}\n${c.password}`).digest("hex").slice(0, 16);
}

async function checkSignatures(
  client: RegistryClient,
  image: string,
  digest: string,
  key: ReturnType<typeof loadPublicKey>,
  field: string,
): Promise<void> {
  const tag = signatureTag(digest);
  const manifest = await client.manifest(tag);
  if (!manifest)
    throw new ImageVerificationError(`image ${image} (${digest}) is not signed: no ${tag} in its repository`);
  let layers: ReturnType<typeof signatureLayers>;
  try {
    layers = signatureLayers(manifest.bytes);
  } catch (e) {
    throw new ImageVerificationError(`image ${image}: ${(e as Error).message}`);
  }
  if (layers.length === 0)
    throw new ImageVerificationError(`image ${image} (${digest}) is not signed: ${tag} holds no signature`);
  let otherDigest: string | undefined;
  for (const layer of layers.slice(0, MAX_SIGNATURES)) {
    const payload = await client.blob(layer.digest, MAX_PAYLOAD_BYTES);
    if (!verifiesWith(key, payload, layer.signature)) continue;
    let claimed: string;
    try {
      claimed = signedDigest(payload);
    } catch (e) {
      throw new ImageVerificationError(`image ${image}: ${(e as Error).message}`);
    }
    // The payload names what the signature is for: a valid signature over another image's claim
    // (copied under this digest's tag) proves nothing about this one.
    if (claimed === digest) return;
    otherDigest = claimed;
  }
  throw new ImageVerificationError(
    otherDigest
      ? `image ${image} (${digest}): the signature made with ${field}.publicKey covers another image (${otherDigest})`
      : `image ${image} (${digest}): no signature verifies with ${field}.publicKey (${layers.length} checked)`,
  );
}
