import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";

/**
 * A cosign public key (PEM, SubjectPublicKeyInfo) ready to verify with; throws naming `field` when
 * the text is not one. ECDSA (cosign's default, P-256), RSA and Ed25519 keys are taken, as cosign's
 * `--key` takes them.
 */
export function loadPublicKey(pem: string, field: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch {
    throw new Error(`${field} is not a PEM public key`);
  }
  const type = key.asymmetricKeyType;
  if (type !== "ec" && type !== "rsa" && type !== "ed25519")
    throw new Error(`${field} is a ${type ?? "unknown"} key; cosign keys are ECDSA, RSA or Ed25519`);
  return key;
}

/**
 * Whether `signature` is the key's signature over `payload`: ECDSA (ASN.1 DER) and RSA PKCS#1 v1.5
 * over SHA-256, as cosign signs with its keys, or Ed25519 over the bytes themselves.
 */
export function verifiesWith(key: KeyObject, payload: Buffer, signature: Buffer): boolean {
  try {
    return verify(key.asymmetricKeyType === "ed25519" ? null : "sha256", payload, key, signature);
  } catch {
    // A signature that is not even DER is simply not a valid signature.
    return false;
  }
}

/** A short, stable fingerprint of a key: what the verification cache is keyed by (never the key). */
export function keyFingerprint(key: KeyObject): string {
  const der = key.export({ format: "der", type: "spki" });
  return createHash("sha256").update(der).digest("hex").slice(0, 32);
}
