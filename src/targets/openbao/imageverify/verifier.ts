import { createHash, type KeyObject } from "node:crypto";
import { type IdentityPolicy, identityPolicy } from "./identity.js";
import type { RegistryCredentials } from "./pull-secrets.js";
import { pinnedReference, registryReference } from "./reference.js";
import { type Fetch, RegistryClient, RegistryError } from "./registry.js";
import type { TransparencyLog } from "./rekor.js";
import { keyFingerprint, loadPublicKey } from "./signature.js";
import { checkSignatures, ImageVerificationError, type Mode } from "./signatures.js";
import type { TrustedRootRef, TrustRoot } from "./trust-root.js";

/**
 * Checks that an image is signed with cosign, in TypeScript and against the registry alone: the
 * image reference is resolved to its manifest digest, its signatures are read (cosign 3's Sigstore
 * bundles among the digest's OCI referrers, cosign 2's under its `.sig` tag: see signatures.ts),
 * each signature is checked over what it signs — with the public key, or keylessly
 * against the signing certificate, its chain to the trusted root and its signer's identity — its
 * transparency-log entry is checked offline unless ignoreTlog, and the payload must name that same
 * digest. What passed is cached by image reference and what it was
 * verified with, so a pass that changes nothing asks the registry nothing.
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
  /**
   * The operator's trusted root: the CAs keyless signatures chain to, the Rekor logs entries are
   * checked with (none: keyless, and any check of the log, is refused).
   */
  trustRoot?: TrustRoot;
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

export interface VerifierOptions {
  fetch?: Fetch;
  /** The operator's trusted root for keyless signatures (targets.openbao.imageVerification). */
  trustedRoot?: TrustedRootRef;
  now?: () => number;
  /** How long a tag's verified digest is trusted before the tag is looked up again. */
  tagTtlMs?: number;
  maxEntries?: number;
}

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

  /** Where keyless signatures' trusted root is read from; settings.ts reads it per check. */
  readonly trustedRoot: TrustedRootRef | undefined;

  constructor(private readonly opts: VerifierOptions = {}) {
    this.trustedRoot = opts.trustedRoot;
    this.now = opts.now ?? Date.now;
    // Upstream re-resolves a tag after five minutes: a moved tag is noticed, a quiet pass is free.
    this.tagTtlMs = opts.tagTtlMs ?? 5 * 60_000;
    this.maxEntries = opts.maxEntries ?? 256;
  }

  async verify(image: string, settings: VerifySettings, signal?: AbortSignal): Promise<Verified> {
    const mode = modeOf(settings);
    const ref = registryReference(image);
    if (typeof ref === "string") throw new ImageVerificationError(`image ${image}: ${ref}`);
    const cacheKey = `${image}\n${modeId(mode, settings)}\n${credentialsId(settings, ref.host)}`;
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
      const validUntil = await checkSignatures(client, image, digest, mode, settings.field, this.now());
      // A tag is looked up again after its TTL; a keyless verdict also ends with its certificate.
      const expires = Math.min(ref.digest ? Infinity : this.now() + this.tagTtlMs, validUntil);
      const entry: Entry = {
        digest,
        pinned: pinnedReference(ref, digest),
        ...(Number.isFinite(expires) ? { expires } : {}),
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
 * The mode the settings ask for, after refusing what cannot be verified here. A public key wins,
 * as upstream has it. Keyless needs issuer and subject or issuerRegExp and subjectRegExp (upstream's
 * pairs) and a trusted root. Unless ignoreTlog, each signature must carry a Rekor entry, checked
 * offline with the Rekor keys the trusted root lists (its `tlogs`): without such a root that check
 * cannot be made, and the block is refused saying so. When the root lists CT logs, each keyless
 * certificate must carry an SCT one of them signed (checked in keyless.ts). Refused, not skipped: a check that
 * silently did less than asked would pass images it should not.
 */
function modeOf(settings: VerifySettings): Mode {
  const { field } = settings;
  if (settings.publicKey) {
    let key: KeyObject;
    try {
      key = loadPublicKey(settings.publicKey, `${field}.publicKey`);
    } catch (e) {
      throw new ImageVerificationError((e as Error).message);
    }
    const tlog = transparencyLogs(settings);
    return { kind: "key", key, ...(tlog ? { tlog } : {}) };
  }
  let policy: IdentityPolicy | undefined;
  try {
    policy = identityPolicy(settings, field);
  } catch (e) {
    throw new ImageVerificationError((e as Error).message);
  }
  if (!policy)
    throw new ImageVerificationError(
      `${field}: enabled without publicKey, or issuer and subject, or issuerRegExp and subjectRegExp`,
    );
  if (!settings.trustRoot)
    throw new ImageVerificationError(
      `${field}: keyless verification needs a trusted root, and the operator has none: set targets.openbao.imageVerification.trustedRootConfigMap to a ConfigMap holding trusted_root.json (this operator carries no public Sigstore root; it reaches no public service)`,
    );
  const tlog = transparencyLogs(settings);
  return { kind: "keyless", policy, trustRoot: settings.trustRoot, field, ...(tlog ? { tlog } : {}) };
}

/** The Rekor logs a signature's entry is checked with; undefined under ignoreTlog. Throws when there are none. */
function transparencyLogs(settings: VerifySettings): TransparencyLog[] | undefined {
  if (settings.ignoreTlog) return undefined;
  const { field } = settings;
  if (!settings.trustRoot)
    throw new ImageVerificationError(
      `${field}.ignoreTlog is false, so each signature must carry a transparency-log (Rekor) entry, checked offline with the Rekor keys of the operator's trusted root, and the operator has none: set targets.openbao.imageVerification.trustedRootConfigMap to a trusted_root.json listing tlogs, or ignoreTlog: true`,
    );
  if (settings.trustRoot.transparencyLogs.length === 0)
    throw new ImageVerificationError(
      `${field}.ignoreTlog is false, so each signature must carry a transparency-log (Rekor) entry, but the operator's trusted root lists no tlogs to check it with: add the Rekor log's key to trusted_root.json, or set ignoreTlog: true`,
    );
  return settings.trustRoot.transparencyLogs;
}

/** What a verdict depends on besides the image, as a hash: part of the cache key, never a secret. */
function modeId(mode: Mode, settings: VerifySettings): string {
  // With a log check the verdict also depends on the root's Rekor keys.
  const tlog = mode.tlog ? `:tlog:${settings.trustRoot?.id}` : "";
  if (mode.kind === "key") return `key:${keyFingerprint(mode.key)}${tlog}`;
  const p = mode.policy;
  const what = p.kind === "exact" ? ["exact", p.issuer, p.subject] : ["pattern", p.issuerText, p.subjectText];
  const h = createHash("sha256")
    .update(JSON.stringify([...what, mode.trustRoot.id]))
    .digest("hex");
  return `keyless:${h.slice(0, 32)}${tlog}`;
}

/** Which credentials were used for the host, as a hash: part of the cache key, never the values. */
function credentialsId(settings: VerifySettings, host: string): string {
  const c = settings.credentials?.get(host);
  if (!c) return "-";
  return createHash("sha256").update(`${c.username}\n${c.password}`).digest("hex").slice(0, 16);
}

export { ImageVerificationError } from "./signatures.js";
