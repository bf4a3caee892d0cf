import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import { applyIfChanged } from "../../runtime/apply.js";
import { setControllerReference } from "../../runtime/ownership.js";
import type { KubeObject } from "../../runtime/types.js";
import { refOf } from "./cluster-ref.js";
import { API_PORT, CLUSTER_PORT, clusterLabels, clusterNames, podHost, podSelector } from "./identity.js";
import type { ConfigInputs, PodRuntime, ServiceContext, StepOutcome, WorkloadServices } from "./services.js";
import { CONFIG_KEY, PATHS, SELF_INIT_KEY } from "./workload/statefulsets/build.js";

// INTERIM wiring until the certificate, configuration, networking and identity services land from
// their own branches: TLS-less clusters only, the two Services and the ServiceAccount the pods need.

const quote = (s: string) => JSON.stringify(s);

function renderConfig(c: OpenBaoCluster, inp: ConfigInputs): string {
  const ref = refOf(c);
  const joins = Array.from(
    { length: inp.peers },
    (_, i) =>
      `  retry_join {\n    leader_api_addr = ${quote(`http://${podHost(ref, i, "server", inp.clusterDomain)}:${API_PORT}`)}\n  }`,
  ).join("\n");
  return `ui = false
disable_mlock = true
listener "tcp" {
  address = "0.0.0.0:${API_PORT}"
  cluster_address = "0.0.0.0:${CLUSTER_PORT}"
  tls_disable = true
}
storage "raft" {
  path = ${quote(PATHS.dataDir)}
${joins}
}
seal "static" {
  current_key_id = "operator-managed-1"
  current_key = ${quote(`file://${inp.sealKeyPath}`)}
}
`;
}

async function apply(ctx: ServiceContext, obj: Record<string, unknown>): Promise<void> {
  await applyIfChanged(ctx.client, setControllerReference(ctx.owner, obj as unknown as KubeObject), {
    fieldManager: `${ctx.fieldManager}-interim`,
    force: true,
  });
}

export function defaultServices(): WorkloadServices {
  const ready = (reason: string): StepOutcome => ({ ready: true, reason, message: "" });
  return {
    async certificates(_ctx, c) {
      if (c.spec.tls?.enabled !== false)
        return {
          ready: false,
          reason: "TLSNotImplemented",
          message: "TLS services are not wired in yet; set spec.tls.enabled: false",
        };
      return ready("Disabled");
    },
    async networking(ctx, c) {
      const ref = refOf(c);
      const names = clusterNames(ref);
      const ports = [
        { name: "api", port: API_PORT, targetPort: API_PORT },
        { name: "cluster", port: CLUSTER_PORT, targetPort: CLUSTER_PORT },
      ];
      await apply(ctx, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: names.headlessService, namespace: ref.namespace, labels: clusterLabels(ref) },
        spec: { clusterIP: "None", publishNotReadyAddresses: true, selector: podSelector(ref), ports },
      });
      await apply(ctx, {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: names.clientService, namespace: ref.namespace, labels: clusterLabels(ref) },
        spec: { selector: podSelector(ref), ports },
      });
      return ready("Reconciled");
    },
    async identity(ctx, c) {
      const ref = refOf(c);
      await apply(ctx, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: {
          name: clusterNames(ref).serviceAccount,
          namespace: ref.namespace,
          labels: clusterLabels(ref),
        },
      });
      return ready("Reconciled");
    },
    renderConfig,
    renderSelfInit: () => "",
    podRuntime(_c, paths): PodRuntime {
      return {
        command: ["bao"],
        args: [
          "server",
          `-config=${paths.configDir}/${CONFIG_KEY}`,
          `-config=${paths.configDir}/${SELF_INIT_KEY}`,
        ],
        volumes: [],
        volumeMounts: [],
      };
    },
  };
}
