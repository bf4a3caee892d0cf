import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// The lost-data guard on the local node with real OpenBao: a 1-voter cluster is initialized, then
// its pod's data claim and the pod are deleted, so the StatefulSet brings pod 0 back on an empty
// volume. The operator must not initialize over it: Degraded=True DataLost with a Warning event,
// the root-token Secret untouched, OpenBao left uninitialized; only the acknowledgement annotation
// naming the new claim's uid lets it initialize afresh.

const NAME = "lost";
const POD0 = `${NAME}-0`;
const CLAIM = `data-${POD0}`;
const ACK = "openbao.org/acknowledge-data-loss";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao target: the lost-data guard", { timeout: 30 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("oblost");
    await installOpenBaoCrd(ctx);
  });
  after(async () => {
    await op?.stop();
    await deleteNamespace(ctx);
  });

  const cluster = (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const condition = async (type: string): Promise<Json | undefined> =>
    ((await cluster()).status?.conditions ?? []).find((c: Json) => c.type === type);
  const baoInitialized = async (): Promise<boolean> => {
    // `bao status` exits 2 while sealed or uninitialized; its JSON still says which.
    const out = await ctx.exec(POD0, ["sh", "-c", "bao status -format=json; true"]);
    return JSON.parse(out).initialized === true;
  };
  const events = async (reason: string): Promise<Json[]> =>
    JSON.parse(await ctx.kubectl(["get", "events.v1.events.k8s.io", "-o", "json"])).items.filter(
      (e: Json) =>
        e.reason === reason && e.regarding?.kind === "OpenBaoCluster" && e.regarding?.name === NAME,
    );

  it("an initialized cluster whose claim is deleted stops with DataLost; the claim's uid lets it initialize afresh", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "128Mi" } },
    });
    const formed = performance.now();
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 900);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 120);
    const token = await ctx.getJson(`secret/${NAME}-root-token`);
    const oldClaim = (await ctx.getJson(`pvc/${CLAIM}`)).metadata.uid as string;
    process.stdout.write(`# formed in ${((performance.now() - formed) / 1000).toFixed(1)} s\n`);

    // The data goes: the claim (held by pvc-protection until its pod is gone), then the pod.
    await ctx.kubectl(["delete", "pvc", CLAIM, "--wait=false"]);
    await ctx.kubectl(["delete", "pod", POD0, "--wait=true", "--timeout=180s"]);
    const lostAt = performance.now();
    const newClaim = await poll(
      async () => {
        const uid = JSON.parse(
          await ctx.kubectl(["get", "pvc", "-o", "json", "--field-selector", `metadata.name=${CLAIM}`]),
        ).items[0]?.metadata?.uid as string | undefined;
        return uid && uid !== oldClaim ? uid : undefined;
      },
      300_000,
      `a new claim ${CLAIM}`,
    );
    const degraded = await poll(
      async () => {
        const c = await condition("Degraded");
        return c?.status === "True" && c.reason === "DataLost" ? c : undefined;
      },
      300_000,
      "Degraded=True DataLost",
    );
    process.stdout.write(
      `# DataLost reported ${((performance.now() - lostAt) / 1000).toFixed(1)} s after the pod was deleted: ${degraded.message}\n`,
    );
    assert.ok(degraded.message.includes(`${ACK}=${newClaim}`), "the message names the uid that acknowledges");
    assert.match(degraded.message, /the status says OpenBao was initialized/);
    const warned = await poll(
      async () => {
        const found = (await events("DataLost")).filter((e) => e.type === "Warning");
        return found.length > 0 ? found : undefined;
      },
      60_000,
      "a Warning DataLost event",
    );
    assert.match(warned[0].note, /nothing is initialized over it/);
    // Nothing was initialized over the lost data.
    assert.equal(await baoInitialized(), false, "OpenBao on pod 0 is still uninitialized");
    const kept = await ctx.getJson(`secret/${NAME}-root-token`);
    assert.equal(
      kept.metadata.resourceVersion,
      token.metadata.resourceVersion,
      "root-token Secret untouched",
    );
    assert.equal(kept.data.token, token.data.token);
    assert.equal((await cluster()).status.initialized, true, "status.initialized kept");

    // An acknowledgement naming another claim (the old one) does not count, and says so.
    await ctx.kubectl(["annotate", "openbaocluster", NAME, `${ACK}=${oldClaim}`]);
    await poll(
      async () => {
        const c = await condition("Degraded");
        return c?.reason === "DataLost" && /names another claim/.test(c.message) ? true : undefined;
      },
      120_000,
      "DataLost saying the acknowledgement names another claim",
    );
    assert.equal(await baoInitialized(), false, "still uninitialized after the wrong acknowledgement");
    assert.equal(
      (await ctx.getJson(`secret/${NAME}-root-token`)).metadata.resourceVersion,
      token.metadata.resourceVersion,
    );

    // The right one: initialized afresh, a new root token, the cluster ready again.
    const acked = performance.now();
    await ctx.kubectl(["annotate", "--overwrite", "openbaocluster", NAME, `${ACK}=${newClaim}`]);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    process.stdout.write(
      `# ready again ${((performance.now() - acked) / 1000).toFixed(1)} s after the acknowledgement\n`,
    );
    assert.equal(await baoInitialized(), true);
    const fresh = await ctx.getJson(`secret/${NAME}-root-token`);
    assert.notEqual(fresh.data.token, token.data.token, "a new root token");
    assert.ok((await events("DataLossAcknowledged")).length > 0, "a DataLossAcknowledged event");
    await poll(
      async () => ((await condition("Degraded"))?.status === "False" ? true : undefined),
      120_000,
      "Degraded=False",
    );
  });
});
