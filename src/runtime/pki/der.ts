import { isoTime } from "../utc-time.js";

/**
 * The handful of ASN.1 DER encodings an X.509 certificate needs. node:crypto parses, verifies and
 * signs certificates but cannot build one, and a general ASN.1 library would pull a dozen packages
 * (and a global reflect polyfill) into the operator for what fits in one screen. Pure.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, "utf8"));
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** `[n] EXPLICIT`: a constructed context tag around a whole encoding. */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** `[n] IMPLICIT` over a primitive type: the content with the context tag instead of its own. */
export const implicit = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from big-endian bytes (leading zeros trimmed, a zero added when the top bit is set). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let body = bytes.subarray(i);
  if (body.length === 0) body = Buffer.from([0]);
  if (body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return tlv(0x02, body);
}

export function smallInteger(n: number): Buffer {
  const hex = n.toString(16);
  return unsignedInteger(Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex"));
}

/** BIT STRING holding whole bytes (a signature, a public key). */
export const bitString = (b: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));

/**
 * BIT STRING of named bits (keyUsage): bit 0 is the most significant bit of the first byte, and DER
 * drops trailing zero bits, saying how many of the last byte are unused.
 */
export function namedBits(bits: number[]): Buffer {
  const top = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(top / 8) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return tlv(0x03, Buffer.concat([Buffer.from([7 - (top & 7)]), bytes]));
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split(".").map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const groups: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) groups.unshift(0x80 | (v & 0x7f));
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime for 1950–2049, GeneralizedTime otherwise, as RFC 5280 requires; whole seconds, UTC. */
export function time(d: Date): Buffer {
  const iso = isoTime(d); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, "");
  const year = d.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, "ascii"));
  return tlv(0x18, Buffer.from(`${digits}Z`, "ascii"));
}
