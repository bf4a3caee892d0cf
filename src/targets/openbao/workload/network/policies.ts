/**
 * The NetworkPolicies around one cluster: one for the OpenBao pods (deny by default, then what a
 * cluster needs, then the user's rules) and one for the operator's Jobs. Pure, like the rest of the
 * network plan; where the API server is comes in as an input.
 */
import type { KubeObject } from "../../../../runtime/types.js";
import {
  API_PORT,
  CLUSTER_PORT,
  Component,
  clusterNames,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
} from "../../identity.js";
import { metricsSettingsOrNone } from "../config/metrics.js";
import { meta, type NetworkCluster, type NetworkInputs, networkRef, peerSelector } from "./plan.js";

const tcp = (port: number) => ({ protocol: "TCP", port });

/**
 * Deny by default around the OpenBao pods, then allow what a cluster needs: peers to each other
 * (API and Raft ports), clients in the namespace, the operator and the Gateway to the API port; out
 * to peers, cluster DNS and the Kubernetes API. The user's rules are added after, never instead.
 */
export function networkPolicy(c: NetworkCluster, inputs: NetworkInputs): KubeObject {
  const ref = networkRef(c);
  const net = c.spec.network ?? {};
  const peers = { podSelector: { matchLabels: peerSelector(ref) } };
  const byName = (ns: string) => ({
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
  });
  const apiFrom: Record<string, unknown>[] = [{ podSelector: {} }];
  if (inputs.operatorNamespace && inputs.operatorNamespace !== ref.namespace)
    apiFrom.push(byName(inputs.operatorNamespace));
  const gwNs = c.spec.gateway?.enabled ? (c.spec.gateway.gatewayRef.namespace ?? ref.namespace) : undefined;
  if (gwNs && gwNs !== ref.namespace && gwNs !== inputs.operatorNamespace) apiFrom.push(byName(gwNs));
  // A metrics-only listener is reached as the API port is, by the same clients and trusted peers.
  const listener = metricsSettingsOrNone(c)?.listener;
  const clientPorts = [tcp(API_PORT), ...(listener ? [tcp(listener.port)] : [])];
  const trusted = (net.trustedIngressPeers ?? []).map((peer) => ({ from: [peer], ports: clientPorts }));
  const egress: Record<string, unknown>[] = [
    { to: [peers], ports: [tcp(API_PORT), tcp(CLUSTER_PORT)] },
    dnsEgress(c),
    ...dnsEndpointEgress(c),
    ...apiServerEgressRule(inputs),
  ];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: meta(ref, clusterNames(ref).networkPolicy),
    spec: {
      // The operator's Jobs carry the cluster's labels too; they have a policy of their own.
      podSelector: { matchLabels: peerSelector(ref), matchExpressions: [notJob] },
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        { from: [peers], ports: [tcp(API_PORT), tcp(CLUSTER_PORT)] },
        { from: apiFrom, ports: clientPorts },
        ...trusted,
        ...((net.ingressRules ?? []) as Record<string, unknown>[]),
      ],
      egress: [...egress, ...((net.egressRules ?? []) as Record<string, unknown>[])],
    },
  };
}

/**
 * The components of the operator's Jobs: backup (scheduled, manual, and the rolling upgrade's
 * pre-upgrade backup), restore, blue-green's upgrade-snapshot and validation-hook (upstream's
 * labels), and upgrade, which such Jobs carried before; one made then may still run.
 */
const JOB_COMPONENTS = [
  Component.Backup,
  Component.Restore,
  Component.UpgradeSnapshot,
  Component.ValidationHook,
  Component.Upgrade,
];
const notJob = { key: LABEL_COMPONENT, operator: "NotIn", values: JOB_COMPONENTS };

function dnsEgress(c: NetworkCluster): Record<string, unknown> {
  return {
    to: [
      {
        namespaceSelector: {
          matchLabels: { "kubernetes.io/metadata.name": c.spec.network?.dnsNamespace ?? "kube-system" },
        },
        podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
      },
    ],
    ports: [
      { protocol: "UDP", port: 53 },
      { protocol: "TCP", port: 53 },
    ],
  };
}

/**
 * spec.network.dnsEndpointIPs: the DNS pods' own addresses, for network plugins that match egress
 * after the Service address was translated, where the namespace/pod rule above matches nothing.
 */
function dnsEndpointEgress(c: NetworkCluster): Record<string, unknown>[] {
  const ips = c.spec.network?.dnsEndpointIPs ?? [];
  const host = (ip: string) => (ip.includes(":") ? `${ip}/128` : `${ip}/32`);
  return ips.length === 0
    ? []
    : [
        {
          to: ips.map((ip) => ({ ipBlock: { cidr: host(ip) } })),
          ports: [
            { protocol: "UDP", port: 53 },
            { protocol: "TCP", port: 53 },
          ],
        },
      ];
}

function apiServerEgressRule(inputs: NetworkInputs): Record<string, unknown>[] {
  const to = inputs.apiServer.cidrs.map((cidr) => ({ ipBlock: { cidr } }));
  return to.length > 0 ? [{ to, ports: inputs.apiServer.ports.map(tcp) }] : [];
}

/**
 * The operator's Jobs (backup, restore, pre-upgrade snapshot, pre-promotion hook): nothing comes in; out to DNS, the
 * cluster's OpenBao API, the Kubernetes API and whatever spec.network.egressRules allows (the
 * object store). Without egress rules a Development cluster's Jobs may reach any address on 443, as
 * upstream's do; so may an unset profile's (upstream does not run those at all, and a backup that
 * can reach no object store helps nobody). A Hardened cluster's Jobs get no such rule: its backups
 * and restores refuse to start without egress rules (NetworkEgressRulesRequired).
 */
export function jobsNetworkPolicy(c: NetworkCluster, inputs: NetworkInputs): KubeObject {
  const ref = networkRef(c);
  const rules = (c.spec.network?.egressRules ?? []) as Record<string, unknown>[];
  const egress: Record<string, unknown>[] = [
    dnsEgress(c),
    ...dnsEndpointEgress(c),
    { to: [{ podSelector: { matchLabels: peerSelector(ref) } }], ports: [tcp(API_PORT)] },
    ...apiServerEgressRule(inputs),
  ];
  if (c.spec.profile !== "Hardened" && rules.length === 0)
    egress.push({
      to: [{ ipBlock: { cidr: "0.0.0.0/0" } }, { ipBlock: { cidr: "::/0" } }],
      ports: [tcp(443)],
    });
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: meta(ref, clusterNames(ref).jobsNetworkPolicy),
    spec: {
      podSelector: {
        matchLabels: { [LABEL_CLUSTER]: ref.name },
        matchExpressions: [{ key: LABEL_COMPONENT, operator: "In", values: JOB_COMPONENTS }],
      },
      // Ingress listed with no rule: nothing may connect (the API server drops an empty list, so
      // none is sent, or every pass would see a difference).
      policyTypes: ["Ingress", "Egress"],
      egress: [...egress, ...rules],
    },
  };
}

/** CIDRs and ports for the API-server egress rule: the spec's when given, else what was observed. */
export function apiServerEgress(
  c: NetworkCluster,
  observed: { serviceIPs: string[]; endpointIPs: string[]; ports: number[] },
): { cidrs: string[]; ports: number[] } {
  const net = c.spec.network ?? {};
  const host = (ip: string) => (ip.includes(":") ? `${ip}/128` : `${ip}/32`);
  const given = [
    ...(net.apiServerCIDR ? [net.apiServerCIDR] : []),
    ...(net.apiServerEndpointIPs ?? []).map(host),
  ];
  const cidrs = given.length > 0 ? given : [...observed.serviceIPs, ...observed.endpointIPs].map(host);
  // 443 is the Service port; 6443 the usual endpoint port, which some CNIs match after NAT.
  const ports = [...new Set([443, 6443, ...observed.ports])].sort((a, b) => a - b);
  return { cidrs: [...new Set(cidrs)], ports };
}
