/**
 * APIServerNetworkReady, pure: how well the NetworkPolicies' egress to the Kubernetes API is known.
 * True with endpoint addresses (the spec's apiServerEndpointIPs, or the ones the `kubernetes`
 * EndpointSlices show when the spec gives no address), Unknown when only the Service address (or the
 * spec's apiServerCIDR) is known — enough where the CNI matches before DNAT, not after — and False
 * when no address is known or the spec's is not an address.
 */
import { isIP } from "node:net";
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import type { Readiness } from "./contract.js";

function validCidr(s: string): boolean {
  const [ip, bits, ...rest] = s.split("/");
  if (rest.length > 0 || !ip || bits === undefined || !/^[0-9]{1,3}$/.test(bits)) return false;
  const family = isIP(ip);
  return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
}

export function apiServerNetwork(
  c: OpenBaoCluster,
  observed: { serviceIPs: string[]; endpointIPs: string[] },
): Readiness {
  const net = c.spec.network ?? {};
  const cidr = net.apiServerCIDR?.trim();
  const endpoints = net.apiServerEndpointIPs ?? [];
  const invalid = [
    ...(cidr && !validCidr(cidr) ? [`spec.network.apiServerCIDR ${cidr}`] : []),
    ...endpoints.filter((ip) => isIP(ip.trim()) === 0).map((ip) => `spec.network.apiServerEndpointIPs ${ip}`),
  ];
  if (invalid.length > 0)
    return {
      status: "False",
      reason: R.APIServerNetworkConfigurationInvalid,
      message: `not an address: ${invalid.join(", ")}`,
    };
  const given = cidr !== undefined && cidr !== "" ? true : endpoints.length > 0;
  const endpointIPs = given ? endpoints : observed.endpointIPs;
  const serviceAddress = cidr || (given ? "" : observed.serviceIPs.join(", "));
  if (endpointIPs.length > 0)
    return {
      status: "True",
      reason: R.APIServerNetworkReady,
      message: `Kubernetes API egress allows endpoint addresses ${endpointIPs.join(", ")}${serviceAddress ? ` and ${serviceAddress}` : ""}`,
    };
  if (serviceAddress)
    return {
      status: "Unknown",
      reason: R.APIServerEndpointIPsRecommended,
      message: `Kubernetes API egress allows ${serviceAddress} only; where the CNI matches egress after DNAT, also set spec.network.apiServerEndpointIPs`,
    };
  return {
    status: "False",
    reason: R.APIServerNetworkConfigurationInvalid,
    message:
      "the Kubernetes API server's address is unknown (the operator may not read the kubernetes Service); set spec.network.apiServerCIDR or spec.network.apiServerEndpointIPs",
  };
}
