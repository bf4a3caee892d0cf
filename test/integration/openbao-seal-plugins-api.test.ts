import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import { UpgradeManager } from "../../src/targets/openbao/adminops/upgrade/core/manager.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// OpenBao 2.7's rule that the cloud and HSM seals need a declared kms plugin, on the real API server:
// the operator process prepares no workload for such a spec, and an upgrade to 2.7 does not start.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const AWSKMS = { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "arn:aws:kms:eu-west-1:1:key/k" } };

describe("openbao 2.7 seal plugins on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;
  const rc = { log: silentLogger(), signal: new AbortController().signal };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-sealplug");
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    await op?.stop();
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("an upgrade 2.6.2 → 2.7.2 with awskms and no kms plugin is refused: InvalidSpec naming the plugin, no lock, nothing started", async () => {
    await createOpenBaoCluster(client, ns, "up", { version: "2.7.2", replicas: 3, unseal: AWSKMS });
    await client.mergePatch(
      OPENBAOCLUSTER,
      "up",
      ns,
      { status: { initialized: true, currentVersion: "2.6.2" } },
      "status",
    );
    const manager = new UpgradeManager({
      client,
      events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
      clusters: { get: () => ({ metadata: {} }) as OpenBaoCluster },
      access: { clusterDomain: "cluster.local" },
    });
    await manager.reconcile(`${ns}/up`, rc);
    const c = await client.get<OpenBaoCluster>(OPENBAOCLUSTER, "up", ns);
    const cond = c.status?.conditions?.find((x) => x.type === "Upgrading");
    assert.equal(cond?.reason, "InvalidSpec");
    assert.match(cond!.message, /spec\.plugins: .*type: kms, name: awskms/);
    assert.equal(c.status?.operationLock, undefined);
    assert.equal(c.status?.upgrade, undefined);
  });

  it("the workload is not prepared for 2.7 with awskms and no plugin; declaring the plugin lets it through", async () => {
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
    await createOpenBaoCluster(client, ns, "wl", { version: "2.7.2", replicas: 1, unseal: AWSKMS });
    const degraded = await eventually(
      async () =>
        ((await client.get(OPENBAOCLUSTER, "wl", ns)) as Json)["status"]?.conditions?.find(
          (c: Json) => c["type"] === "Degraded" && c["reason"] === "InvalidSpec",
        ),
      60_000,
      "Degraded InvalidSpec",
    );
    assert.match(degraded.message, /spec\.plugins: .*awskms seal/);
    assert.equal(await client.get(STATEFULSET, "wl", ns).catch(() => undefined), undefined);

    await client.mergePatch(OPENBAOCLUSTER, "wl", ns, {
      spec: {
        plugins: [
          {
            type: "kms",
            name: "awskms",
            image: "ghcr.io/openbao/openbao-plugin-kms-awskms",
            version: "v0.1.0",
            binaryName: "openbao-plugin-kms-awskms",
            sha256sum: "a".repeat(64),
          },
        ],
      },
    });
    await eventually(
      () => client.get(STATEFULSET, "wl", ns).catch(() => undefined),
      60_000,
      "the voter StatefulSet",
    );
  });
});
