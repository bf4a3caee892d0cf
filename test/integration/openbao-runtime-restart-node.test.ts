import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// spec.runtime.restartAt end to end on a real pod, through the operator process: the AdminOps
// controller wakes on the new value, takes the lock, deletes the pod, waits for its replacement to
// be Ready and unsealed with Raft healthy (OpenBao's own answers), records it and gives the lock
// back; the same value again restarts nothing. One voter, which is deleted as the leader (nobody to
// hand over to); the order among several voters is proven in openbao-runtime-restart.test.ts.

const NAME = "rsbao";

describe("openbao runtime.restartAt on the node: one restart per value", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obrsn");
    await installOpenBaoCrd(ctx);
  });
  after(async () => {
    if (process.env["OPENBAO_TEST_DUMP"]) console.log(op?.output());
    await op?.stop();
    await deleteNamespace(ctx);
  });

  it("replaces the pod once, waits for it to serve again, completes and releases the lock", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "128Mi" } },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    const before = (await ctx.getJson(`pod/${NAME}-0`)).metadata.uid as string;

    const at = new Date().toISOString();
    await ctx.kubectl([
      "patch",
      `openbaocluster/${NAME}`,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { runtime: { restartAt: at } } }),
    ]);
    await ctx.waitFor(
      `openbaocluster/${NAME}`,
      'jsonpath={.status.conditions[?(@.type=="Restarting")].reason}=RestartComplete',
      600,
    );
    const c = await ctx.getJson(`openbaocluster/${NAME}`);
    assert.equal(c.status.runtimeRestart.restartAt, at);
    assert.deepEqual(c.status.runtimeRestart.restartedPods, [`${NAME}-0`]);
    assert.ok(c.status.runtimeRestart.completedAt);
    assert.equal(c.status.operationLock, undefined);
    const after = await ctx.getJson(`pod/${NAME}-0`);
    assert.notEqual(after.metadata.uid, before, "the pod was replaced");
    assert.ok(
      after.status.conditions.some(
        (x: { type: string; status: string }) => x.type === "Ready" && x.status === "True",
      ),
    );
    // The completed value asks nothing more: the replacement is left alone.
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 120);
    assert.equal((await ctx.getJson(`pod/${NAME}-0`)).metadata.uid, after.metadata.uid);
  });
});
