import type { OpenBaoCluster } from "../../apis/openbaocluster.js";
import { refOf } from "./cluster-ref.js";
import { reloadPodPieces, reloadWrapperConfigMap } from "./reload/pod.js";
import type { ConfigInputs, PodRuntime, WorkloadServices } from "./services.js";
import { reconcileCertificates } from "./workload/certs/reconcile.js";
import { renderConfig as renderClusterConfig, renderSelfInitRequests } from "./workload/config/index.js";
import { reconcileIdentity } from "./workload/identity/reconcile.js";
import { reconcileNetwork } from "./workload/network/reconcile.js";

/** The narrow services the workload controller runs, each in its own folder. */
export function defaultServices(
  opts: { operatorNamespace?: string; gatewayAPI?: boolean } = {},
): WorkloadServices {
  return {
    async certificates(ctx, c) {
      const out = await reconcileCertificates(ctx, c);
      return {
        ready: out.ready,
        reason: out.reason,
        message: out.message,
        activeCertHash: out.activeCertHash,
        ...(out.recheckAt !== undefined ? { recheckAt: out.recheckAt } : {}),
        ...(out.changes ? { changes: out.changes } : {}),
      };
    },
    async networking(ctx, c) {
      const out = await reconcileNetwork(ctx, c, {
        ...(opts.operatorNamespace ? { operatorNamespace: opts.operatorNamespace } : {}),
        ...(opts.gatewayAPI === false ? { gatewayAPI: false } : {}),
      });
      return {
        ready: out.ready,
        reason: out.reason,
        message: out.message,
        changes: out.changes ?? [],
        ...(out.gateway ? { gateway: out.gateway } : {}),
        ...(out.ingress ? { ingress: out.ingress } : {}),
      };
    },
    async identity(ctx, c) {
      const out = await reconcileIdentity(ctx, c);
      return { ready: out.ready, reason: out.reason, message: out.message, changes: out.changes ?? [] };
    },
    renderConfig(c: OpenBaoCluster, inp: ConfigInputs): string {
      return renderClusterConfig(c, {
        clusterDomain: inp.clusterDomain,
        component: inp.component,
        ...(inp.revision ? { revision: inp.revision } : {}),
        ...(inp.nonVoter ? { nonVoter: true } : {}),
        ...(inp.peerHosts ? { peers: inp.peerHosts } : {}),
      });
    },
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
