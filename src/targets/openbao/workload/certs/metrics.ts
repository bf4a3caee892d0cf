import { Counter, Gauge } from "prom-client";
import { OpenBaoMetric as M } from "../../../../apis/openbaocluster-names.js";
import { registry } from "../../../../runtime/metrics.js";
import { parseCertificates } from "./pem.js";

// Upstream's TLS metric names and labels, so its certificate-expiry alerts keep working.

/** How the serving certificate came to be, upstream's `type` label. */
export type CertificateSource = "OperatorManaged" | "External";
const SOURCES: readonly CertificateSource[] = ["OperatorManaged", "External"];

export const tlsCertExpiry = new Gauge({
  name: M.TlsCertExpiryTimestamp,
  help: "Unix time at which the server certificate OpenBao serves expires.",
  labelNames: ["namespace", "name", "type"] as const,
  registers: [registry],
});

export const tlsRotations = new Counter({
  name: M.TlsRotationTotal,
  help: "Server certificates the operator issued (the first one and every rotation).",
  labelNames: ["namespace", "name"] as const,
  registers: [registry],
});

/** Records the served leaf's expiry under its source (and drops the other source's series). */
export function showCertificateExpiry(
  ref: { namespace: string; name: string },
  source: CertificateSource,
  certPem: string | undefined,
): void {
  for (const other of SOURCES)
    if (other !== source) tlsCertExpiry.remove({ namespace: ref.namespace, name: ref.name, type: other });
  // The same parsed certificate the pass's plan used (parsing is cached by PEM text).
  const leaf = certPem ? parseCertificates(certPem)?.[0] : undefined;
  const notAfter = leaf ? Date.parse(leaf.validTo) : Number.NaN;
  if (Number.isFinite(notAfter))
    tlsCertExpiry.set(
      { namespace: ref.namespace, name: ref.name, type: source },
      Math.floor(notAfter / 1000),
    );
  else tlsCertExpiry.remove({ namespace: ref.namespace, name: ref.name, type: source });
}

/** No certificate of ours is served (TLS disabled, or ACME: OpenBao's own). */
export function hideCertificateExpiry(ref: { namespace: string; name: string }): void {
  for (const type of SOURCES) tlsCertExpiry.remove({ namespace: ref.namespace, name: ref.name, type });
}

export function forgetCertificateMetrics(namespace: string, name: string): void {
  for (const type of SOURCES) tlsCertExpiry.remove({ namespace, name, type });
  tlsRotations.remove({ namespace, name });
}
