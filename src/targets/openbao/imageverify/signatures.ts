import { type KeyObject, X509Certificate } from "node:crypto";
import { bundleSignature, statementDigests } from "./bundle.js";
import type { IdentityPolicy } from "./identity.js";
import { checkKeyless } from "./keyless.js";
import { signatureLayers, signedDigest } from "./payload.js";
import { signatureTag } from "./reference.js";
import { bundleLayer, bundleReferrers, referrersTag } from "./referrers.js";
import type { RegistryClient } from "./registry.js";
import { annotationEntry, checkLogEntries, type LogEntry, type TransparencyLog } from "./rekor.js";
import { verifiesWith } from "./signature.js";
import type { TrustRoot } from "./trust-root.js";

/**
 * An image digest's cosign signatures, from both places cosign keeps them, checked one by one:
 * - cosign 3 (and 2.x with --new-bundle-format): Sigstore bundles among the digest's OCI referrers
 *   (the referrers API, or the `sha256-<hex>` fallback tag where the registry has none), each a
 *   DSSE-signed in-toto Statement of predicate https://sigstore.dev/cosign/sign/v1 naming the digest;
 * - cosign 2 and earlier: the `sha256-<hex>.sig` tag, one simple-signing payload per layer.
 * The referrers are read first, as cosign 3 does, and the first signature that passes decides: the
 * `.sig` tag is only read when no bundle passed. Neither place outranks the other — a bad
 * signature in one does not veto a good one in the other, as cosign accepts any one valid signature.
 * Unless ignoreTlog, a signature also needs a transparency-log entry proving it was logged (rekor.ts);
 * a keyless certificate must then have been valid when it was logged, not now.
 */

/**
 * What the signatures are checked with: a public key, or a keyless identity and trusted root; with
 * `tlog`, the Rekor logs an entry of each signature must verify with (absent: ignoreTlog).
 */
export type Mode = (
  | { kind: "key"; key: KeyObject }
  | { kind: "keyless"; policy: IdentityPolicy; trustRoot: TrustRoot; field: string }
) & { tlog?: readonly TransparencyLog[] };

/** A verification that did not pass; `transient` when the registry could not be asked. */
export class ImageVerificationError extends Error {
  constructor(
    message: string,
    readonly transient = false,
  ) {
    super(message);
  }
}

const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Per place: a repository can hold any number of referrers or signature layers. */
const MAX_SIGNATURES = 32;

/** One stored signature, whichever format it came in. */
interface Candidate {
  /** The bytes the signature is over. */
  signed: Buffer;
  signature: Buffer;
  certificate?: string;
  /** What a log entry records the sha256 of: the simple-signing payload, the DSSE payload. */
  payload: Buffer;
  /** The digests it claims to cover; throws when it is no image signature. */
  claims(): string[];
  /** The transparency-log entries it carries; throws when one is malformed. */
  logEntries(): LogEntry[];
}

/** What one place held: the signatures, and why entries there were not signatures at all. */
interface Found {
  /** Whether the place exists at all (the `.sig` tag, the referrers listing). */
  present: boolean;
  candidates: Candidate[];
  unreadable: string[];
}

async function referrerSignatures(client: RegistryClient, digest: string): Promise<Found> {
  const index = (await client.referrers(digest)) ?? (await client.manifest(referrersTag(digest)))?.bytes;
  const out: Found = { present: index !== undefined, candidates: [], unreadable: [] };
  if (!index) return out;
  let listed: string[];
  try {
    listed = bundleReferrers(index);
  } catch (e) {
    out.unreadable.push((e as Error).message);
    return out;
  }
  for (const ref of listed.slice(0, MAX_SIGNATURES)) {
    const manifest = await client.manifest(ref);
    if (!manifest) continue;
    let layer: string | undefined;
    try {
      layer = bundleLayer(manifest.bytes, digest);
    } catch (e) {
      out.unreadable.push((e as Error).message);
      continue;
    }
    if (!layer) continue;
    const bytes = await client.blob(layer, MAX_PAYLOAD_BYTES);
    let b: ReturnType<typeof bundleSignature>;
    try {
      b = bundleSignature(bytes);
    } catch (e) {
      out.unreadable.push((e as Error).message);
      continue;
    }
    out.candidates.push({
      signed: b.signed,
      signature: b.signature,
      ...(b.certificate ? { certificate: b.certificate } : {}),
      payload: b.payload,
      claims: () => statementDigests(b.payload),
      logEntries: b.logEntries,
    });
  }
  return out;
}

async function tagSignatures(client: RegistryClient, image: string, digest: string): Promise<Found> {
  const manifest = await client.manifest(signatureTag(digest));
  const out: Found = { present: manifest !== undefined, candidates: [], unreadable: [] };
  if (!manifest) return out;
  let layers: ReturnType<typeof signatureLayers>;
  try {
    layers = signatureLayers(manifest.bytes);
  } catch (e) {
    throw new ImageVerificationError(`image ${image}: ${(e as Error).message}`);
  }
  for (const layer of layers.slice(0, MAX_SIGNATURES)) {
    const payload = await client.blob(layer.digest, MAX_PAYLOAD_BYTES);
    out.candidates.push({
      signed: payload,
      signature: layer.signature,
      ...(layer.certificate ? { certificate: layer.certificate } : {}),
      payload,
      claims: () => [signedDigest(payload)],
      logEntries: () => (layer.bundle ? [annotationEntry(layer.bundle)] : []),
    });
  }
  return out;
}

/** Outcome of checking one place's signatures. */
type Outcome =
  | { validUntil: number }
  | { otherDigest?: string; why: string[]; checked: number; present: boolean };

/** When the log says the signature was made (ms), or why its entries prove nothing. */
function loggedAt(c: Candidate, mode: Mode, logs: readonly TransparencyLog[]): number | string {
  let entries: LogEntry[];
  try {
    entries = c.logEntries();
  } catch (e) {
    return (e as Error).message;
  }
  let verifierDer: Buffer;
  if (mode.kind === "key") verifierDer = mode.key.export({ format: "der", type: "spki" });
  else {
    try {
      verifierDer = new X509Certificate(c.certificate ?? "").raw;
    } catch {
      return "the signature's certificate is not a PEM X.509 certificate";
    }
  }
  const v = checkLogEntries(entries, { signature: c.signature, payload: c.payload, verifierDer }, logs);
  return v.ok ? v.integratedTime : v.why;
}

function check(found: Found, digest: string, mode: Mode, now: number): Outcome {
  let otherDigest: string | undefined;
  const why = new Set<string>(found.unreadable);
  for (const c of found.candidates) {
    let validUntil = Infinity;
    if (mode.kind === "key" && !verifiesWith(mode.key, c.signed, c.signature)) continue;
    // Keyless without a certificate is refused by checkKeyless, saying so; no log entry is read for it.
    let signedAt: number | undefined;
    if (mode.tlog && (mode.kind === "key" || c.certificate)) {
      const at = loggedAt(c, mode, mode.tlog);
      if (typeof at === "string") {
        why.add(at);
        continue;
      }
      signedAt = at;
    }
    if (mode.kind === "keyless") {
      const verdict = checkKeyless(c.certificate, c.signed, c.signature, {
        ...mode,
        now,
        ...(signedAt !== undefined ? { signedAt } : {}),
      });
      if (!verdict.ok) {
        why.add(verdict.why);
        continue;
      }
      validUntil = verdict.notAfter;
    }
    let claimed: string[];
    try {
      claimed = c.claims();
    } catch (e) {
      why.add((e as Error).message);
      continue;
    }
    // The payload names what the signature is for: a valid signature over another image's claim
    // (copied under this digest) proves nothing about this one.
    if (claimed.includes(digest)) return { validUntil };
    otherDigest = claimed[0];
  }
  return {
    ...(otherDigest ? { otherDigest } : {}),
    why: [...why],
    checked: found.candidates.length,
    present: found.present,
  };
}

/**
 * Checks the digest's signatures; returns until when the verdict holds (Infinity for a key, the
 * certificate's end for keyless), or throws saying why none passed.
 */
export async function checkSignatures(
  client: RegistryClient,
  image: string,
  digest: string,
  mode: Mode,
  field: string,
  now: number,
): Promise<number> {
  const bundles = check(await referrerSignatures(client, digest), digest, mode, now);
  if ("validUntil" in bundles) return bundles.validUntil;
  const legacy = check(await tagSignatures(client, image, digest), digest, mode, now);
  if ("validUntil" in legacy) return legacy.validUntil;
  const checked = bundles.checked + legacy.checked;
  const tag = signatureTag(digest);
  if (checked === 0) {
    const legacyPart = legacy.present ? `${tag} holds no signature` : `no ${tag} in its repository`;
    const unreadable = bundles.why.length ? ` (${bundles.why.join("; ")})` : "";
    throw new ImageVerificationError(
      `image ${image} (${digest}) is not signed: ${legacyPart} and no Sigstore bundle among its referrers${unreadable}`,
    );
  }
  const signedWith = mode.kind === "key" ? `${field}.publicKey` : "the accepted keyless identity";
  const otherDigest = bundles.otherDigest ?? legacy.otherDigest;
  if (otherDigest)
    throw new ImageVerificationError(
      `image ${image} (${digest}): the signature made with ${signedWith} covers another image (${otherDigest})`,
    );
  const why = [...new Set([...bundles.why, ...legacy.why])];
  if (mode.kind === "key")
    throw new ImageVerificationError(
      `image ${image} (${digest}): no signature verifies with ${field}.publicKey (${checked} checked)${why.length ? `: ${why.join("; ")}` : ""}`,
    );
  throw new ImageVerificationError(
    `image ${image} (${digest}): no keyless signature is accepted (${checked} checked): ${why.join("; ")}`,
  );
}
