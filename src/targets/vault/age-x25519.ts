/**
 * age's native X25519 identities (`AGE-SECRET-KEY-1…`) and recipients (`age1…`) with node's own
 * X25519: the age-encryption package and its curve libraries cost ~7 MiB of RSS once loaded, and a
 * seed needs only a new key and the public half of one, never encryption. The encoding is age's:
 * Bech32 (BIP-173, not Bech32m) of the 32-byte key, the identity upper-cased.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";

const SECRET_HRP = "age-secret-key-";
const PUBLIC_HRP = "age";
const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
/** PKCS#8 and SPKI wrappings of a raw X25519 key (RFC 8410): a fixed prefix, then the 32 bytes. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");
const SPKI_PREFIX_LENGTH = 12;

/** A new X25519 identity, as age-keygen prints it. */
export function generateX25519Identity(): string {
  const { privateKey } = generateKeyPairSync("x25519");
  const der = privateKey.export({ type: "pkcs8", format: "der" });
  return bech32Encode(SECRET_HRP, der.subarray(der.length - 32)).toUpperCase();
}

/** The recipient of an X25519 identity; throws on anything that is not one. */
export function identityToRecipient(identity: string): string {
  const { hrp, data } = bech32Decode(identity);
  if (hrp !== SECRET_HRP || data.length !== 32) throw new Error("not an age X25519 identity");
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, data]),
    format: "der",
    type: "pkcs8",
  });
  const spki = createPublicKey(privateKey).export({ type: "spki", format: "der" });
  return bech32Encode(PUBLIC_HRP, spki.subarray(SPKI_PREFIX_LENGTH));
}

function polymod(values: number[]): number {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= gen[i]!;
  }
  return chk;
}

function hrpExpand(hrp: string): number[] {
  const codes = [...hrp].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >>> 5), 0, ...codes.map((c) => c & 31)];
}

/** Regroups bits: 8 → 5 pads the last group with zeros; 5 → 8 refuses leftover bits that are set. */
function convertBits(data: Uint8Array | number[], from: number, to: number, pad: boolean): number[] {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const max = (1 << to) - 1;
  for (const v of data) {
    acc = (acc << from) | v;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >>> bits) & max);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & max);
  } else if (bits >= from || ((acc << (to - bits)) & max) !== 0) {
    throw new Error("invalid padding");
  }
  return out;
}

function bech32Encode(hrp: string, bytes: Uint8Array): string {
  const words = convertBits(bytes, 8, 5, true);
  const mod = polymod([...hrpExpand(hrp), ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join("")}`;
}

function bech32Decode(text: string): { hrp: string; data: Buffer } {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) throw new Error("mixed case");
  const s = text.toLowerCase();
  const sep = s.lastIndexOf("1");
  if (sep < 1 || sep + 7 > s.length) throw new Error("no separator or checksum");
  const hrp = s.slice(0, sep);
  const words = [...s.slice(sep + 1)].map((c) => CHARSET.indexOf(c));
  if (words.some((w) => w < 0)) throw new Error("invalid character");
  if (polymod([...hrpExpand(hrp), ...words]) !== 1) throw new Error("bad checksum");
  return { hrp, data: Buffer.from(convertBits(words.slice(0, -6), 5, 8, false)) };
}
