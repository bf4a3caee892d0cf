import { X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { ipBytes } from "../../../../runtime/pki/x509.js";

/** Splits PEM text into its CERTIFICATE blocks; anything else (keys, comments) is skipped. Pure. */
export function certificateBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/** Parsed certificates of a PEM bundle; undefined when a block does not parse. */
export function parseCertificates(pem: string): X509Certificate[] | undefined {
  try {
    return certificateBlocks(pem).map((b) => new X509Certificate(b));
  } catch {
    return undefined;
  }
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
