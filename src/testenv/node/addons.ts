import type { NodeAddresses } from "./addresses.js";
import { BUSYBOX_IMAGE, COREDNS_IMAGE } from "./images/catalog.js";

// Cluster add-ons the node installs: CoreDNS, and local-path-provisioner's ConfigMap, ServiceAccount
// and default StorageClass (the provisioner itself runs as a process inside the node).

type Obj = Record<string, unknown>;

export const DNS_NAMESPACE = "kube-system";
export const LOCAL_PATH_NAMESPACE = "local-path-storage";
export const LOCAL_PATH_SERVICE_ACCOUNT = "local-path-provisioner-service-account";
export const STORAGE_CLASS = "local-path";

export function corednsManifests(a: NodeAddresses): Obj[] {
  const labels = { "k8s-app": "kube-dns" };
  // No `forward`: nothing outside the cluster exists for the node, so other names fail fast.
  const corefile = [
    ".:53 {",
    "    errors",
    "    health :8080",
    "    ready :8181",
    `    kubernetes ${a.clusterDomain} in-addr.arpa ip6.arpa {`,
    "        pods insecure",
    "        fallthrough in-addr.arpa ip6.arpa",
    "    }",
    "    cache 30",
    "}",
  ].join("\n");
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: DNS_NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        {
          apiGroups: [""],
          resources: ["endpoints", "services", "pods", "namespaces"],
          verbs: ["list", "watch"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: DNS_NAMESPACE }],
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: DNS_NAMESPACE },
      data: { Corefile: corefile },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: DNS_NAMESPACE, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            dnsPolicy: "Default",
            priorityClassName: "system-cluster-critical",
            containers: [
              {
                name: "coredns",
                image: COREDNS_IMAGE,
                imagePullPolicy: "IfNotPresent",
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 53, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
                ],
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
                livenessProbe: { httpGet: { path: "/health", port: 8080 }, periodSeconds: 10 },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: DNS_NAMESPACE, labels },
      spec: {
        selector: labels,
        clusterIP: a.dnsServiceIp,
        ports: [
          { name: "dns", port: 53, protocol: "UDP" },
          { name: "dns-tcp", port: 53, protocol: "TCP" },
        ],
      },
    },
  ];
}

export function localPathManifests(volumeDir: string): Obj[] {
  const helperPod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "helper-pod" },
    spec: { containers: [{ name: "helper-pod", image: BUSYBOX_IMAGE, imagePullPolicy: "IfNotPresent" }] },
  };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: LOCAL_PATH_NAMESPACE } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: LOCAL_PATH_SERVICE_ACCOUNT, namespace: LOCAL_PATH_NAMESPACE },
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "local-path-config", namespace: LOCAL_PATH_NAMESPACE },
      data: {
        "config.json": JSON.stringify({
          nodePathMap: [{ node: "DEFAULT_PATH_FOR_NON_LISTED_NODES", paths: [volumeDir] }],
        }),
        // 0777 so that pods running as any uid (OpenBao: 100) can write to their volume.
        setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
        teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
        "helperPod.yaml": JSON.stringify(helperPod),
      },
    },
    {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: {
        name: STORAGE_CLASS,
        annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
      },
      provisioner: "rancher.io/local-path",
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
    },
  ];
}
