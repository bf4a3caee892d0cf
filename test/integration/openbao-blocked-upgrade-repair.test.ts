import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// A blocked concern never stops repair (issue 42), for OpenBao: while an upgrade is refused (a
// version below the running one: DowngradeBlocked) a Service and a ConfigMap the cluster owns,
// deleted by hand, come back, and the Upgrading condition keeps saying why the upgrade waits. The
// real operator process on the shared API server, no node: the running version and initialization
// are what the workload controller would have written into status after a first boot.

const NAME = "blk";
const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao target: a blocked upgrade never stops repair", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "obblk");
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    await op?.stop();
    client.close();
  });

  const cluster = async (name = NAME): Promise<Json> => (await client.get(OPENBAOCLUSTER, name, ns)) as Json;
  const upgrading = async (name = NAME): Promise<Json | undefined> =>
    ((await cluster(name))["status"]?.conditions ?? []).find((c: Json) => c.type === "Upgrading");
  /** The objects of `type` the cluster owns (a controller reference to it). */
  const owned = async (type: ResourceType, uid: string): Promise<KubeObject[]> =>
    (await client.list<KubeObject>(type, { namespace: ns })).items.filter((o) =>
      (o.metadata.ownerReferences ?? []).some((r) => r.uid === uid),
    );

  /** Deletes `victim` and waits for the operator to create it again (a new uid). */
  const comesBack = async (type: ResourceType, victim: KubeObject) => {
    const name = victim.metadata.name!;
    const deletedAt = performance.now();
    await client.delete(type, name, ns);
    const back = await eventually(
      async () => {
        const o = await client.getOrUndefined<KubeObject>(type, name, ns);
        return o && o.metadata.uid !== victim.metadata.uid ? o : undefined;
      },
      90_000,
      `${type.kind} ${name} to be created again while the upgrade is blocked`,
    );
    console.log(
      `# ${type.kind} ${name} back ${Math.round(performance.now() - deletedAt)} ms after its deletion, the upgrade blocked`,
    );
    return back;
  };

  it("DowngradeBlocked on Upgrading, and a deleted Service and ConfigMap come back", async () => {
    const created = await createOpenBaoCluster(client, ns, NAME, { version: "2.6.2", replicas: 1 });
    const uid = created.metadata.uid!;
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
    const [service, configMap] = await eventually(
      async () => {
        const s = await owned(SERVICE, uid);
        const c = await owned(CONFIGMAP, uid);
        return s.length && c.length ? ([s[0]!, c[0]!] as const) : undefined;
      },
      90_000,
      "the workload controller to create the cluster's Services and ConfigMap",
    );
    // What a first boot at 2.7.2 leaves in status: spec.version 2.6.2 is then a downgrade.
    await client.mergePatch(
      OPENBAOCLUSTER,
      NAME,
      ns,
      { status: { initialized: true, currentVersion: "2.7.2" } },
      "status",
    );
    const blocked = await eventually(
      async () => {
        const c = await upgrading();
        return c?.reason === OpenBaoClusterReason.DowngradeBlocked ? c : undefined;
      },
      90_000,
      "Upgrading DowngradeBlocked",
    );
    assert.equal(blocked["status"], "False");
    assert.match(blocked["message"], /2\.6\.2/);

    const svc = await comesBack(SERVICE, service);
    assert.ok(
      (svc.metadata.ownerReferences ?? []).some((r) => r.uid === uid),
      "owned by the cluster again",
    );
    const cm = await comesBack(CONFIGMAP, configMap);
    assert.ok(
      (cm.metadata.ownerReferences ?? []).some((r) => r.uid === uid),
      "owned by the cluster again",
    );

    // The block is still what the condition says: repair did not clear or hide it.
    const still = await upgrading();
    assert.equal(still?.["reason"], OpenBaoClusterReason.DowngradeBlocked);
    assert.equal((await cluster())["status"]?.currentVersion, "2.7.2", "nothing was downgraded");
  });

  it("an upgrade waiting on its prerequisites (no voter answers) says so, and a deleted Service comes back", async () => {
    const name = "wt";
    const created = await createOpenBaoCluster(client, ns, name, { version: "2.8.0", replicas: 1 });
    const uid = created.metadata.uid!;
    const service = await eventually(
      async () => (await owned(SERVICE, uid))[0],
      90_000,
      "the workload controller to create the cluster's Services",
    );
    await client.mergePatch(
      OPENBAOCLUSTER,
      name,
      ns,
      { status: { initialized: true, currentVersion: "2.7.2" } },
      "status",
    );
    const waiting = await eventually(
      async () => {
        const c = await upgrading(name);
        return c?.message?.includes("waits") ? c : undefined;
      },
      90_000,
      "Upgrading to say the upgrade waits",
    );
    console.log(`# ${name}: Upgrading ${waiting["status"]} ${waiting["reason"]}: ${waiting["message"]}`);
    assert.equal(waiting["status"], "False");
    assert.match(waiting["message"], /upgrade to 2\.8\.0 waits/);

    await comesBack(SERVICE, service);
    const still = await upgrading(name);
    // Which prerequisite it names may change with what the pass saw (pod or cluster not Ready);
    // that the upgrade waits, and why, is still said.
    assert.equal(still?.["status"], "False");
    assert.match(still?.["message"] ?? "", /upgrade to 2\.8\.0 waits: /);
    assert.equal((await cluster(name))["status"]?.currentVersion, "2.7.2", "nothing was upgraded");
  });
});
