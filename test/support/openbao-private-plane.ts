import type { KubeClient } from "../../src/runtime/client.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { type OpenBaoTargetConfig, parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { openbaoTarget } from "../../src/targets/openbao/target.js";
import { type ControlPlane, startControlPlane } from "../../src/testenv/controlplane.js";
import { ApiForwarder } from "./api-forwarder.js";
import { clientFor, freshNamespace } from "./kube.js";
import { installOpenBaoClusterCrd } from "./openbao-cluster.js";

// A control plane of the file's own with the openbao target running in-process behind a recording
// forwarder: for tests that install cluster-wide kinds (Gateway API CRDs) other files must not see, or
// count every request the target makes. Passes are 1 s apart so settled states come quickly.

export interface PrivateOpenBaoPlane {
  cp: ControlPlane;
  /** Admin client straight to the API server (not recorded). */
  admin: KubeClient;
  /** Every request the target made. */
  fwd: ApiForwarder;
  /** The target's client, through the forwarder. */
  client: KubeClient;
  manager: Manager;
  /**
   * The target's configuration, which its passes read as they go: a test may lengthen pollMs and
   * resyncMs so that from then on only events wake a cluster.
   */
  config: OpenBaoTargetConfig;
  /** The one namespace the target watches. */
  ns: string;
  stop(): Promise<void>;
}

/** `prepare` runs after the OpenBaoCluster CRD is installed and before the target starts. */
export async function startPrivateOpenBaoPlane(
  namespacePrefix: string,
  prepare?: (admin: KubeClient) => Promise<void>,
): Promise<PrivateOpenBaoPlane> {
  const cp = await startControlPlane();
  const admin = clientFor(cp.kubeconfigPath);
  await installOpenBaoClusterCrd(admin);
  await prepare?.(admin);
  const ns = await freshNamespace(admin, namespacePrefix);
  const fwd = await ApiForwarder.start(cp.kubeconfigPath, {});
  const client = fwd.client();
  const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
  const config = parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao");
  await openbaoTarget().setup(manager, config);
  await manager.start();
  return {
    cp,
    admin,
    fwd,
    client,
    manager,
    config,
    ns,
    async stop() {
      await manager.stop();
      client.close();
      await fwd.close();
      admin.close();
      await cp.stop();
    },
  };
}
