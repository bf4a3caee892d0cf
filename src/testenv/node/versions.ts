// Every pinned version of the node's components, so an upgrade is one diff. Kubernetes itself
// (kubelet, kube-proxy, kube-scheduler, kubectl) follows KUBERNETES_VERSION in ../cache.ts.
export const RUNC_VERSION = "v1.5.3";
export const CONTAINERD_VERSION = "v2.4.2";
export const CNI_PLUGINS_VERSION = "v1.10.0";
export const COREDNS_VERSION = "v1.14.7";
export const LOCAL_PATH_PROVISIONER_VERSION = "v0.0.30";

/** Debian packages the node needs: runc links libseccomp; iptables/nft/conntrack serve kube-proxy. */
export const NODE_APT_PACKAGES = [
  "libseccomp-dev",
  "pkg-config",
  "iptables",
  "nftables",
  "conntrack",
  "busybox-static",
] as const;
