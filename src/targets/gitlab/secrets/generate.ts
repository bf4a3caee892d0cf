/**
 * The values of the generator types this reconciler implements, as GitLab's shared-secrets Job
 * makes them (character set, length, encoding), from a source of random bytes: the CSPRNG in
 * production, a fixed sequence in tests. Pure apart from that source.
 */
import { generateKeyPair, type KeyObject, randomBytes } from "node:crypto";
import type { Generator, RandomCharset } from "../../../apis/gitlabsecrets.js";

/** n random bytes. */
export type RandomSource = (n: number) => Buffer;

export const cryptoRandom: RandomSource = (n) => randomBytes(n);

/** A PEM RSA private key of `bits`. */
export type RsaSource = (bits: number) => Promise<string>;

/**
 * As `openssl genrsa <bits>` writes it with OpenSSL 3: PKCS#8 PEM. Generated off the event loop
 * (libuv's pool): a 4096-bit key takes long enough to stall watches and the Lease otherwise.
 */
export const cryptoRsa: RsaSource = (bits) =>
  new Promise((resolve, reject) =>
    generateKeyPair(
      "rsa",
      {
        modulusLength: bits,
        privateKeyEncoding: { type: "pkcs8", format: "pem" },
        publicKeyEncoding: { type: "spki", format: "pem" },
      },
      (err, _publicKey, privateKey) => (err ? reject(err) : resolve(privateKey)),
    ),
  );

export type KeySpec = { type: "rsa"; bits: number } | { type: "ecdsa" } | { type: "ed25519" };

/** A private key of the spec, generated off the event loop (large RSA keys take seconds). */
export const cryptoKeyPair = (spec: KeySpec): Promise<KeyObject> =>
  new Promise((resolve, reject) => {
    const done = (err: Error | null, _pub: KeyObject, priv: KeyObject) => (err ? reject(err) : resolve(priv));
    if (spec.type === "rsa") generateKeyPair("rsa", { modulusLength: spec.bits }, done);
    else if (spec.type === "ecdsa") generateKeyPair("ec", { namedCurve: "prime256v1" }, done);
    else generateKeyPair("ed25519", undefined, done);
  });

/** Where generated values come from: the CSPRNG and node's key generation, or fixed ones in tests. */
export interface Sources {
  random: RandomSource;
  rsa: RsaSource;
  /** Key pairs of x509 and sshHostKeys units; node's generation when absent. */
  keyPair?: (spec: KeySpec) => Promise<KeyObject>;
}

export const cryptoSources: Sources = { random: cryptoRandom, rsa: cryptoRsa, keyPair: cryptoKeyPair };

const ALPHABETS: Record<RandomCharset, string> = {
  alphanumeric: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
  hex: "abcdef0123456789",
  lowerAlphanumeric: "abcdefghijklmnopqrstuvwxyz0123456789",
};

/**
 * Exactly `length` characters of the charset, each uniform: a byte is used only below the largest
 * multiple of the alphabet's size (rejection sampling), so no character is more likely than another.
 * The Job's `tr` filter may return fewer characters for a narrow charset; this never does.
 */
export function randomString(random: RandomSource, charset: RandomCharset, length: number): string {
  const alphabet = ALPHABETS[charset];
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const b of random(Math.max(16, (length - out.length) * 2))) {
      if (b >= limit) continue;
      out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** base64 as coreutils writes it by default: lines of 76 columns, each ending in a newline. */
export function base64Wrapped(data: Buffer): string {
  const flat = data.toString("base64");
  const lines: string[] = [];
  for (let i = 0; i < flat.length; i += 76) lines.push(flat.slice(i, i + 76));
  return `${lines.join("\n")}\n`;
}

/**
 * The stored bytes of one generator of an implemented type (random, bytes, static, rsa); the caller
 * has checked its fields (plan.ts).
 */
export async function generateValue(g: Generator, sources: Sources): Promise<Buffer> {
  const random = sources.random;
  switch (g.type) {
    case "random": {
      let text = randomString(random, g.charset!, g.length!);
      // Wrapped first, then encoded: the registry reads the decoded JSON array.
      if (g.wrap === "jsonArray") text = JSON.stringify([text]);
      const raw = Buffer.from(text, "utf8");
      if (g.encoding === "base64") return Buffer.from(base64Wrapped(raw), "utf8");
      if (g.encoding === "base64-nowrap") return Buffer.from(raw.toString("base64"), "utf8");
      return raw;
    }
    case "bytes": {
      const raw = random(g.length!);
      return g.encoding === "base64" ? Buffer.from(raw.toString("base64"), "utf8") : raw;
    }
    case "static":
      return Buffer.from(g.value ?? "", "utf8");
    case "rsa":
      return Buffer.from(await sources.rsa(g.bits!), "utf8");
    default:
      throw new Error(`generator type ${g.type} is not implemented`);
  }
}
