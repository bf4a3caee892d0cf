import { X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { ipBytes } from "../../../../runtime/pki/x509.js";

/** Splits PEM text into its CERTIFICATE blocks; anything else (keys, comments) is skipped. Pure. */
export function certificateBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * Parsed certificates, by PEM text: every pass of every cluster reads the same few Secrets, and
 * parsing them again each time was most of a quiet pass's CPU. Bounded; the oldest entry goes first.
 */
const parsed = new Map<string, X509Certificate[] | undefined>();
const PARSED_MAX = 512;

/** Parsed certificates of a PEM bundle; undefined when a block does not parse. Treat as read-only. */
export function parseCertificates(pem: string): X509Certificate[] | undefined {
  if (parsed.has(pem)) return parsed.get(pem);
  let certs: X509Certificate[] | undefined;
  try {
    certs = certificateBlocks(pem).map((b) => new X509Certificate(b));
  } catch {
    certs = undefined;
  }
  parsed.set(pem, certs);
  if (parsed.size > PARSED_MAX) parsed.delete(parsed.keys().next().value!);
  return certs;
}

/**
 * A comparable form of a SAN entry: DNS names lowercased, IP addresses as their bytes in hex (node
 * prints IPv6 SANs unabridged and uppercase, users write them abridged).
 */
export function sanKey(name: string): string {
  return isIP(name) ? `ip:${ipBytes(name).toString("hex")}` : `dns:${name.toLowerCase()}`;
}

/** The subjectAltName entries of a certificate, as {@link sanKey}s. */
export function sanKeys(cert: X509Certificate): string[] {
  const raw = cert.subjectAltName;
  if (!raw) return [];
  const out: string[] = [];
  for (const item of raw.split(/,\s*/)) {
    if (item.startsWith("DNS:")) out.push(sanKey(item.slice(4)));
    else if (item.startsWith("IP Address:")) out.push(sanKey(item.slice(11)));
  }
  return out;
}
