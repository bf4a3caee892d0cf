import type { NodeAddresses } from "./addresses.js";

// The configuration files of the node's components, as pure functions of its folders and addresses.

export interface NodePaths {
  dir: string;
  containerdSocket: string;
  runc: string;
  cniBinDir: string;
  cniConfDir: string;
  resolvConf: string;
  clientCa: string;
  kubeletKubeconfig: string;
  adminKubeconfig: string;
}

export const PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1";

export function containerdConfig(p: NodePaths): string {
  const q = JSON.stringify;
  return `version = 3
root = ${q(`${p.dir}/containerd/root`)}
state = ${q(`${p.dir}/containerd/state`)}

[grpc]
  address = ${q(p.containerdSocket)}

[ttrpc]
  address = ${q(`${p.containerdSocket}.ttrpc`)}

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${q(PAUSE_IMAGE)}

[plugins."io.containerd.cri.v1.runtime"]
  # Root here may lack CAP_SYS_RESOURCE; lowering a sandbox's oom_score_adj (kubelet asks -998) then
  # fails every pod. This keeps the score at or above the shim's own.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${q(p.runc)}
        Root = ${q(`${p.dir}/run/runc`)}
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${q(p.cniBinDir)}]
    conf_dir = ${q(p.cniConfDir)}
    max_conf_num = 1

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`;
}

export function cniConfig(p: NodePaths, a: NodeAddresses): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "testnode",
      plugins: [
        {
          type: "bridge",
          bridge: a.bridgeName,
          isGateway: true,
          // No masquerade: there is nowhere to masquerade to, and pods keep their own source address.
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: `${p.dir}/cni/ipam`,
            ranges: [[{ subnet: a.podCidr, gateway: a.bridgeIp }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfig(p: NodePaths, a: NodeAddresses): string {
  return `${JSON.stringify(
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      // 1.37 refuses cgroup v1 unless told otherwise; machines like this one still run v1.
      failCgroupV1: false,
      failSwapOn: false,
      cgroupDriver: "cgroupfs",
      cgroupRoot: a.cgroupRoot,
      cgroupsPerQOS: true,
      enforceNodeAllocatable: [],
      containerRuntimeEndpoint: `unix://${p.containerdSocket}`,
      address: a.nodeIp,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort: 10248,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: p.clientCa },
      },
      authorization: { mode: "AlwaysAllow" },
      clusterDomain: a.clusterDomain,
      clusterDNS: [a.dnsServiceIp],
      resolvConf: p.resolvConf,
      podLogsDir: `${p.dir}/logs/pods`,
      // Test machines run with little free disk and memory headroom; eviction would only add noise.
      evictionHard: {
        "memory.available": "100Mi",
        "nodefs.available": "1%",
        "imagefs.available": "1%",
        "nodefs.inodesFree": "1%",
      },
      imageGCHighThresholdPercent: 100,
      // Every image here is imported from the cache, and the harness's own registries serve some of
      // them again by digest (the keyless image-verification sample). With the default policy
      // (NeverVerifyPreloadedImages) the kubelet's first registry pull of an image records it as
      // pulled for that registry only, and every later pod naming the same image by its preloaded
      // tag must pull again, from a registry this node cannot reach (ImagePullBackOff in unrelated
      // tests sharing the node). No credentials guard anything on this node.
      imagePullCredentialsVerificationPolicy: "NeverVerify",
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      maxPods: 110,
      syncFrequency: "10s",
      fileCheckFrequency: "5s",
      nodeStatusUpdateFrequency: "5s",
      shutdownGracePeriod: "0s",
    },
    null,
    2,
  )}\n`;
}

export function kubeProxyConfig(p: NodePaths, a: NodeAddresses): string {
  return `${JSON.stringify(
    {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      clientConnection: { kubeconfig: p.adminKubeconfig },
      hostnameOverride: a.nodeName,
      mode: "iptables",
      clusterCIDR: a.podCidr,
      detectLocalMode: "ClusterCIDR",
      healthzBindAddress: "127.0.0.1:10256",
      metricsBindAddress: "127.0.0.1:10249",
      // Conntrack limits are machine-wide; leave them alone.
      conntrack: { maxPerCore: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
      iptables: { localhostNodePorts: false },
      nodePortAddresses: [`${a.nodeIp}/32`],
    },
    null,
    2,
  )}\n`;
}

/**
 * resolv.conf of pods with dnsPolicy Default (CoreDNS itself): no upstream exists in the node, so
 * the only server named is the cluster's own, and CoreDNS answers names outside the cluster with
 * SERVFAIL instead of forwarding them anywhere.
 */
export function nodeResolvConf(a: NodeAddresses): string {
  return `nameserver ${a.dnsServiceIp}\noptions ndots:1\n`;
}

/** resolv.conf for a process run inside the node like an in-cluster client (cluster DNS first). */
export function clusterResolvConf(a: NodeAddresses, namespace = "default"): string {
  const d = a.clusterDomain;
  return `nameserver ${a.dnsServiceIp}\nsearch ${namespace}.svc.${d} svc.${d} ${d}\noptions ndots:5\n`;
}
