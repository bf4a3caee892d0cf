import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { BEFORE_UPSTREAM_NAMES, earlierOperator } from "../support/earlier-operator.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// A cluster made by the operator as it was before the generated names followed upstream's, then
// taken over by this one, on the local node with real OpenBao: the earlier commit is built from this
// repository's history and runs first. After the switch the cluster keeps its data claims (same
// uids), its Raft members (same node ids and addresses, all voters) and the value written before,
// and has moved every other object to upstream's names, the old ones gone.

const NAME = "mig";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao: a cluster from before upstream's names moves to them", { timeout: 45 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let earlierMain: string;

  before(
    async () => {
      ctx = await nodeNamespace("obmig");
      await installOpenBaoCrd(ctx);
      earlierMain = await earlierOperator(BEFORE_UPSTREAM_NAMES);
    },
    { timeout: 10 * 60_000 },
  );
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await deleteNamespace(ctx);
  });

  const bao = (token: string, command: string) =>
    ctx.exec(`${NAME}-0`, ["sh", "-c", `BAO_TOKEN=${token} ${command}`]);
  const peers = async (token: string) =>
    (JSON.parse(await bao(token, "bao operator raft list-peers -format=json")).data.config.servers as Json[])
      .map((s) => ({ node_id: s.node_id as string, address: s.address as string, voter: s.voter as boolean }))
      .sort((a, b) => a.node_id.localeCompare(b.node_id));
  const claims = async () =>
    Object.fromEntries(
      (JSON.parse(await ctx.kubectl(["get", "pvc", "-o", "json"])).items as Json[]).map((c) => [
        c.metadata.name,
        c.metadata.uid,
      ]),
    );
  const exists = async (resource: string) =>
    (await ctx.kubectl(["get", resource, "--ignore-not-found", "-o", "name"])).trim() !== "";

  it("keeps its claims, Raft members and data; every other object takes upstream's name", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" }, earlierMain);
    const started = performance.now();
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 3, storage: { size: "128Mi" } },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 1200);
    const secret = await ctx.getJson(`secret/${NAME}-root-token`);
    const token = Buffer.from(secret["data"].token, "base64").toString("utf8");
    const peersBefore = await poll(
      async () => {
        const list = await peers(token).catch(() => []);
        return list.length === 3 && list.every((p) => p.voter) ? list : undefined;
      },
      300_000,
      "3 voters under the earlier operator",
      2000,
    );
    assert.ok(
      peersBefore.every((p) => p.address.includes(`.${NAME}-internal.`)),
      JSON.stringify(peersBefore),
    );
    await bao(token, "bao secrets enable -path=kv kv-v2");
    await bao(token, "bao kv put kv/migration value=kept");
    const claimsBefore = await claims();
    assert.equal(Object.keys(claimsBefore).length, 3);
    assert.ok(await exists(`serviceaccount/${NAME}`), "the earlier operator's ServiceAccount");
    await op.stop();
    process.stdout.write(
      `# formed under the earlier operator in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );

    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
    const switched = performance.now();
    // Done when every pod runs as the new account, is Ready, and the old objects are gone.
    await poll(
      async () => {
        const c = await ctx.getJson(`openbaocluster/${NAME}`);
        const pods = (JSON.parse(await ctx.kubectl(["get", "pods", "-o", "json"])).items as Json[]).filter(
          (p) => p.metadata.labels?.["openbao.org/component"] === "server",
        );
        const moved =
          pods.length === 3 &&
          pods.every(
            (p) =>
              p.spec.serviceAccountName === `${NAME}-serviceaccount` &&
              !p.metadata.deletionTimestamp &&
              p.status.conditions?.some((x: Json) => x.type === "Ready" && x.status === "True"),
          );
        const available = c.status?.conditions?.some(
          (x: Json) => x.type === "Available" && x.status === "True",
        );
        return moved &&
          available &&
          c.status?.readyReplicas === 3 &&
          !(await exists(`serviceaccount/${NAME}`))
          ? c
          : undefined;
      },
      20 * 60_000,
      "every pod on the new ServiceAccount, Ready, and the old one retired",
      3000,
    ).catch(async (e: unknown) => {
      const pods = await ctx.kubectl(["get", "pods,sa,svc,pdb,netpol", "-o", "wide"]).catch(() => "");
      throw new Error(`${String(e)}\n${pods}\n${op?.output().split("\n").slice(-40).join("\n")}`);
    });

    process.stdout.write(
      `# moved to upstream's names in ${((performance.now() - switched) / 1000).toFixed(1)} s\n`,
    );
    const c = await ctx.getJson(`openbaocluster/${NAME}`);
    assert.equal(c.metadata.annotations?.["openbao.org/peer-service"], `${NAME}-internal`);
    assert.deepEqual(await claims(), claimsBefore, "the same data claims, by uid");
    assert.deepEqual(await peers(token), peersBefore, "the same Raft members at the same addresses");
    assert.equal((await bao(token, "bao kv get -field=value kv/migration")).trim(), "kept");
    // Upstream's names, and the earlier ones gone.
    assert.equal((await ctx.getJson(`service/${NAME}`)).spec.clusterIP, "None");
    for (const resource of [
      `service/${NAME}-public`,
      `service/${NAME}-internal`,
      `serviceaccount/${NAME}-serviceaccount`,
      `role/${NAME}-serviceaccount-role`,
      `rolebinding/${NAME}-serviceaccount-rolebinding`,
      `poddisruptionbudget/${NAME}-pdb`,
      `networkpolicy/${NAME}-network-policy`,
    ])
      assert.ok(await exists(resource), resource);
    for (const resource of [
      `role/${NAME}-service-registration`,
      `rolebinding/${NAME}-service-registration`,
      `poddisruptionbudget/${NAME}`,
      `networkpolicy/${NAME}`,
    ])
      assert.ok(!(await exists(resource)), `${resource} retired`);
    const events = JSON.parse(await ctx.kubectl(["get", "events.v1.events.k8s.io", "-o", "json"]))
      .items as Json[];
    assert.ok(events.some((e) => e.reason === "PeerServiceKept" && e.regarding?.name === NAME));
  });
});
