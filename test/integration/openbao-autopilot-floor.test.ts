// Autopilot's settings after a scale-in under three voters (found by the fault campaign's scale
// 3 → 1 → 3: every pass at one voter sent Autopilot settings OpenBao answered 400, and none was
// applied). Real parts: the API server defaults the OpenBaoCluster as a user's would be (any
// Autopilot setting brings `cleanupDeadServers: true` with it), and a real OpenBao with Raft
// storage on loopback judges what the operator sends.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { NAMESPACE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { reconcileAutopilot } from "../../src/targets/openbao/workload/autopilot/autopilot.js";
import { type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

const NAME = "apbao";

describe("openbao Autopilot: the quorum floor under 3 after a scale-in", () => {
  let admin: KubeClient;
  let ns: string;
  let raft: RaftOpenBao;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    ns = await freshNamespace(admin, "obapf");
    raft = await startRaftOpenBao({ nodes: 1 });
  });
  after(async () => {
    await raft?.stop();
    await admin.delete(NAMESPACE, ns).catch(() => {});
    admin.close();
  });

  it("at one voter the settings are applied with cleanup off, though the definition defaulted it on", async () => {
    const bao = new BaoClient({ address: raft.addr });
    const stored = () => admin.get<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns);
    // Three voters with one Autopilot setting, as the campaign's cluster: the API server adds the rest.
    await createOpenBaoCluster(admin, ns, NAME, {
      replicas: 3,
      configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
    });
    const three = await stored();
    assert.equal(
      three.spec.configuration?.raft?.autopilot?.cleanupDeadServers,
      true,
      "the definition's default",
    );
    assert.deepEqual((await reconcileAutopilot(bao, raft.rootToken, three, false)).sort(), [
      "cleanup_dead_servers",
      "dead_server_last_contact_threshold",
      "min_quorum",
      "server_stabilization_time",
    ]);
    const at3 = await bao.autopilotConfig(raft.rootToken);
    assert.equal(at3.cleanup_dead_servers, true);
    assert.equal(at3.min_quorum, 3);

    // Scaled in to one voter (the Raft peers already removed: here there was only one).
    await admin.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { replicas: 1 } });
    const one = await stored();
    const changed = await reconcileAutopilot(bao, raft.rootToken, one, false);
    assert.deepEqual(changed.sort(), ["cleanup_dead_servers", "min_quorum"]);
    const at1 = await bao.autopilotConfig(raft.rootToken);
    assert.equal(at1.cleanup_dead_servers, false);
    assert.equal(at1.min_quorum, 1);
    assert.equal(at1.server_stabilization_time, "5s");
    // Applied for good: the next pass finds nothing to change and sends nothing.
    assert.deepEqual(await reconcileAutopilot(bao, raft.rootToken, one, false), []);

    // Back at three voters cleanup comes back with the floor.
    await admin.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { replicas: 3 } });
    assert.deepEqual((await reconcileAutopilot(bao, raft.rootToken, await stored(), false)).sort(), [
      "cleanup_dead_servers",
      "min_quorum",
    ]);
    const back = await bao.autopilotConfig(raft.rootToken);
    assert.equal(back.cleanup_dead_servers, true);
    assert.equal(back.min_quorum, 3);
  });
});
