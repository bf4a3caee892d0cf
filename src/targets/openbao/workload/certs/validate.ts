import { createPrivateKey, type KeyObject, type X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { isoTime } from "../../../../runtime/utc-time.js";
import { parseCertificates } from "./pem.js";

/**
 * Checks that a server key pair can serve the cluster: the key matches the certificate, the
 * certificate is valid now, its names cover what clients and peers dial, and the CA bundle verifies
 * it. Pure (the caller passes the time). Problems name the Secret key and the fault, never any
 * content of the key.
 */

export interface ServerMaterial {
  certPem: string;
  keyPem: string;
  caPem: string;
}

export interface ValidationInput {
  /** DNS names (wildcards allowed in the certificate, not here) and IPs that must be covered. */
  requiredNames: readonly string[];
  now: Date;
}

export function validateServerMaterial(m: ServerMaterial, input: ValidationInput): string[] {
  const problems: string[] = [];
  const chain = parseCertificates(m.certPem);
  if (!chain) return ["tls.crt: a certificate does not parse"];
  const leaf = chain[0];
  if (!leaf) return ["tls.crt: holds no PEM certificate"];
  let key: KeyObject | undefined;
  try {
    key = createPrivateKey(m.keyPem);
  } catch {
    problems.push("tls.key: is not a PEM private key");
  }
  if (key && !safely(() => leaf.checkPrivateKey(key)))
    problems.push("tls.key: does not belong to the certificate in tls.crt");
  const from = Date.parse(leaf.validFrom);
  const to = Date.parse(leaf.validTo);
  const now = input.now.getTime();
  if (now < from) problems.push(`tls.crt: the certificate is not valid before ${isoTime(from)}`);
  if (now >= to) problems.push(`tls.crt: the certificate expired at ${isoTime(to)}`);
  const uncovered = input.requiredNames.filter((n) => !covers(leaf, n));
  if (uncovered.length > 0)
    problems.push(`tls.crt: the certificate's names do not cover ${uncovered.join(", ")}`);
  const bundle = parseCertificates(m.caPem);
  if (!bundle) problems.push("ca.crt: a certificate does not parse");
  else if (bundle.length === 0) problems.push("ca.crt: holds no PEM certificate");
  else if (!chainVerifies(chain, bundle)) problems.push("ca.crt: no certificate in it verifies tls.crt");
  return problems;
}

export function covers(cert: X509Certificate, name: string): boolean {
  return isIP(name) ? cert.checkIP(name) !== undefined : cert.checkHost(name) !== undefined;
}

/** A check that throws on odd input (an unsupported key type) counts as failed, never as a crash. */
function safely(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

const issued = (child: X509Certificate, parent: X509Certificate): boolean =>
  safely(() => child.checkIssued(parent) && child.verify(parent.publicKey));

/** tls.crt may carry intermediates after the leaf; the last one must be issued by a CA in the bundle. */
function chainVerifies(chain: X509Certificate[], bundle: X509Certificate[]): boolean {
  for (let i = 0; i + 1 < chain.length; i++) if (!issued(chain[i]!, chain[i + 1]!)) return false;
  const top = chain[chain.length - 1]!;
  return bundle.some((ca) => issued(top, ca));
}
