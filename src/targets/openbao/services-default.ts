import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import { applyIfChanged } from "../../runtime/apply.js";
import { setControllerReference } from "../../runtime/ownership.js";
import type { KubeObject } from "../../runtime/types.js";
import { refOf } from "./cluster-ref.js";
import { API_PORT, CLUSTER_PORT, clusterLabels, clusterNames, podSelector } from "./identity.js";
import { reloadPodPieces, reloadWrapperConfigMap } from "./reload/pod.js";
import type { ConfigInputs, PodRuntime, ServiceContext, StepOutcome, WorkloadServices } from "./services.js";
import { reconcileCertificates } from "./workload/certs/reconcile.js";
import { renderConfig as renderClusterConfig, renderSelfInitRequests } from "./workload/config/index.js";

// Certificates, configuration and the reload wrapper are the real services. INTERIM until the
// networking and identity services land from their branch: the two Services, the ServiceAccount
// and the service-registration Role the pods need.

function renderConfig(c: OpenBaoCluster, inp: ConfigInputs): string {
  return renderClusterConfig(c, { clusterDomain: inp.clusterDomain, component: inp.component });
}

async function apply(ctx: ServiceContext, obj: Record<string, unknown>): Promise<void> {
  const out = await applyIfChanged(
    ctx.client,
    setControllerReference(ctx.owner, obj as unknown as KubeObject),
    {
      fieldManager: `${ctx.fieldManager}-interim`,
      force: true,
    },
  );
  if (out.action !== "unchanged" || out.decidedBy === "dryRun")
    ctx.log.debug(
      { object: `${obj["kind"]}`, action: out.action, decidedBy: out.decidedBy },
      "interim service apply",
    );
}

export function defaultServices(): WorkloadServices {
  const ready = (reason: string): StepOutcome => ({ ready: true, reason, message: "" });
  return {
    async certificates(ctx, c) {
      const out = await reconcileCertificates(ctx, c);
      return {
        ready: out.ready,
        reason: out.reason,
        message: out.message,
        activeCertHash: out.activeCertHash,
      };
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
    renderSelfInit: renderSelfInitRequests,
    podRuntime(c, paths): PodRuntime {
      const ref = refOf(c);
      const pieces = reloadPodPieces(ref, {
        serverArgs: ["server", ...paths.configFiles.map((f) => `-config=${f}`)],
        tlsSecretName: paths.tlsSecretName,
      });
      return {
        ...pieces,
        objects: () => [reloadWrapperConfigMap(ref) as unknown as Record<string, unknown>],
      };
    },
  };
}
