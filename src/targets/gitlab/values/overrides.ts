// The third values layer, which wins over everything: what the operator never lets a release install.
// cert-manager, the Runner, the ingress controllers and Envoy Gateway are cluster-wide components an
// administrator provisions, and installing them would need definitions and RBAC the operator never
// applies (spec 001, "The reconciler installs no definitions and no RBAC").
import type { Values } from "./merge.js";

export function operatorOverrides(): Values {
  return {
    installCertmanager: false,
    "gitlab-runner": { install: false },
    "nginx-ingress": { enabled: false },
    haproxy: { install: false },
    traefik: { install: false },
    global: { gatewayApi: { installEnvoy: false } },
  };
}
