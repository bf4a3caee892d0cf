/**
 * ACMEIntegrationReady, pure: what the operator can check of OpenBao's own ACME flow. Behind a
 * Gateway the CA must reach OpenBao's TLS, so the route must pass TLS through (a TLSRoute), which needs
 * the Gateway API; the domains themselves are not resolved here (a pass makes no DNS lookups), so
 * ACMEDomainNotResolvable is never said.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import type { Readiness } from "./contract.js";

export function acmeIntegration(c: OpenBaoCluster, gatewayServed: boolean | undefined): Readiness {
  const g = c.spec.gateway;
  if (g?.enabled && !g.tlsPassthrough)
    return {
      status: "False",
      reason: R.ACMEGatewayNotConfiguredForPassthrough,
      message:
        "tls.mode ACME behind spec.gateway needs spec.gateway.tlsPassthrough: the Gateway would terminate the TLS the ACME challenge checks",
    };
  if (g?.enabled && gatewayServed === false)
    return {
      status: "False",
      reason: R.GatewayAPIMissing,
      message: "the Gateway API CRDs ACME passthrough needs (TLSRoute) are not installed",
    };
  return {
    status: "True",
    reason: R.ACMEIntegrationReady,
    message: "the ACME prerequisites the operator can check are met (the domains' DNS is not checked)",
  };
}
