// Upstream openbao-operator's chart defaults (its values.yaml), for the keys this chart takes under
// upstream's names: the file a user migrating from upstream's chart starts from. Facts of upstream's
// chart, restated as data; tests render and install this chart with it.

// biome-ignore lint/suspicious/noExplicitAny: a values file is an arbitrary tree
type Obj = Record<string, any>;

export const upstreamDefaults = (): Obj => {
  const pod = () => ({
    replicas: 1,
    extraEnv: [],
    nodeSelector: {},
    tolerations: [],
    affinity: {},
    podAnnotations: {},
    podLabels: {},
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      readOnlyRootFilesystem: true,
      runAsGroup: 65532,
      runAsUser: 65532,
    },
    podSecurityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    serviceAccount: { annotations: {} },
  });
  return {
    nameOverride: "",
    fullnameOverride: "",
    platform: "auto",
    image: {
      repository: "ghcr.io/example/openbao-operator",
      tag: "",
      digest: "",
      pullPolicy: "IfNotPresent",
    },
    imagePullSecrets: [],
    operatorVersion: "",
    tenancy: { mode: "multi", targetNamespace: "", namespacePodSecurityLabels: { mode: "enforce" } },
    controller: {
      ...pod(),
      resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "50m", memory: "128Mi" } },
      extraArgs: [],
    },
    provisioner: {
      ...pod(),
      resources: { limits: { cpu: "100m", memory: "64Mi" }, requests: { cpu: "10m", memory: "32Mi" } },
      extraArgs: [],
    },
    metrics: {
      enabled: true,
      port: 8443,
      rbac: { enabled: false, subjects: [] },
      serviceMonitor: {
        enabled: false,
        namespace: "",
        interval: "30s",
        scrapeTimeout: "10s",
        labels: {},
        tlsConfig: {
          insecureSkipVerify: true,
          serverName: "",
          caSecret: { name: "", key: "ca.crt" },
          certSecret: { name: "", key: "tls.crt" },
          keySecret: { name: "", key: "tls.key" },
        },
      },
      victoriaMetrics: {
        enabled: false,
        namespace: "",
        interval: "30s",
        scrapeTimeout: "10s",
        labels: {},
        tlsConfig: { insecureSkipVerify: true, serverName: "" },
      },
    },
    leaderElection: { enabled: true },
    healthProbes: {
      port: 8081,
      livenessInitialDelaySeconds: 15,
      livenessPeriodSeconds: 20,
      readinessInitialDelaySeconds: 5,
      readinessPeriodSeconds: 10,
    },
    admissionPolicies: {
      enabled: true,
      provisionerRBAC: {
        deniedNamespaces: ["openshift"],
        deniedNamespacePrefixes: ["kube-", "openshift-", "gke-", "eks-", "aws-", "aks-", "azure-"],
      },
      maintenanceBreakGlassGroups: ["system:masters"],
    },
    serviceAccountToken: { kubernetesAudience: "", openBaoAudience: "openbao-internal" },
    networkPolicy: { enabled: true, metricsAllowedNamespaceLabels: { metrics: "enabled" } },
    gatewayAPI: { enabled: true },
  };
};
