import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import type { NodeNamespace } from "./node.js";

const HOUR = 3_600_000;

/**
 * The Secrets a cluster with `tls.mode: External` reads (`<name>-tls-ca`, `<name>-tls-server`), made
 * by the test with exactly the names upstream's documentation gives: `*.<name>.<ns>.svc` for the
 * pods, `*.<ns>.svc` for the Services, plus `extraNames` (a gateway hostname). No IP SAN.
 */
export async function createExternalTlsSecrets(
  ctx: NodeNamespace,
  name: string,
  extraNames: string[] = [],
): Promise<{ caPem: string }> {
  const now = new Date();
  const ca = createCertificateAuthority(`${name} test CA`, now, 1000 * HOUR);
  const leaf = issueServerCertificate(ca, {
    commonName: `${name}-public.${ctx.namespace}.svc`,
    names: [`*.${name}.${ctx.namespace}.svc`, `*.${ctx.namespace}.svc`, ...extraNames],
    now,
    validityMs: 500 * HOUR,
  });
  await ctx.apply(
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${name}-tls-ca` },
      stringData: { "ca.crt": ca.certPem },
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${name}-tls-server` },
      type: "kubernetes.io/tls",
      stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem, "ca.crt": ca.certPem },
    },
  );
  return { caPem: ca.certPem };
}
