/**
 * The addresses of node number `index` (0..63) on this machine. Every range is private and owned by
 * the harness; several nodes (concurrent test runs) get disjoint ranges, so host routes never clash.
 *
 *   veth /30          10.250.0.<4i>/30   host side .1, node side .2 (the API server's address)
 *   pod range         10.244.<i>.0/24    bridge gateway .1
 *   Service range     10.96.<i>.0/24     kubernetes .1, cluster DNS .10
 */
export interface NodeAddresses {
  index: number;
  /** Process-wide tag used in names of host objects (veth, cgroup folder). */
  tag: string;
  hostVeth: string;
  nodeVeth: string;
  hostIp: string;
  nodeIp: string;
  vethPrefix: number;
  podCidr: string;
  bridgeIp: string;
  bridgeName: string;
  serviceCidr: string;
  kubernetesServiceIp: string;
  dnsServiceIp: string;
  /** Parent of /kubepods in every cgroup v1 hierarchy (kubelet's cgroupRoot). */
  cgroupRoot: string;
  nodeName: string;
  clusterDomain: string;
  /** `iss` of the ServiceAccount tokens the node's API server signs. */
  serviceAccountIssuer: string;
}

export const MAX_NODES = 64;

export function nodeAddresses(index: number): NodeAddresses {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NODES) {
    throw new Error(`node index must be an integer in 0..${MAX_NODES - 1}, got ${index}`);
  }
  const tag = `ponode${index}`;
  const clusterDomain = "cluster.local";
  return {
    index,
    tag,
    hostVeth: `${tag}h`,
    nodeVeth: `${tag}n`,
    hostIp: `10.250.0.${4 * index + 1}`,
    nodeIp: `10.250.0.${4 * index + 2}`,
    vethPrefix: 30,
    podCidr: `10.244.${index}.0/24`,
    bridgeIp: `10.244.${index}.1`,
    bridgeName: "cni0",
    serviceCidr: `10.96.${index}.0/24`,
    kubernetesServiceIp: `10.96.${index}.1`,
    dnsServiceIp: `10.96.${index}.10`,
    cgroupRoot: `/platform-operator-${tag}`,
    nodeName: "testnode",
    clusterDomain,
    serviceAccountIssuer: `https://kubernetes.default.svc.${clusterDomain}`,
  };
}
