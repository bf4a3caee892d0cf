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

// The operator killed (SIGKILL) in the middle of first boot, and a new process picking up from what
// the cluster and OpenBao say, not from anything the dead process remembered.

const NAME = "rbao";

describe("openbao target: killed mid-bootstrap, a new operator process resumes", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obr");
    await installOpenBaoCrd(ctx);
  });
  after(async () => {
    await op?.stop();
    await deleteNamespace(ctx);
  });

  it("finishes initialization after the first operator died with the workload applied", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "128Mi" } },
    });
    // The first process got as far as the StatefulSet, then dies without any goodbye.
    await ctx.waitFor(`statefulset/${NAME}`, "create", 300);
    await op.kill();
    const before = await ctx.getJson(`openbaocluster/${NAME}`);
    const unsealKey = (await ctx.getJson(`secret/${NAME}-unseal-key`)).data.key;

    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    const c = await ctx.getJson(`openbaocluster/${NAME}`);
    assert.equal(c.status.phase, "Running");
    // Initialized exactly once: a root token exists, and the seal key was never replaced.
    const token = await ctx.getJson(`secret/${NAME}-root-token`);
    assert.ok(token.data.token);
    assert.equal((await ctx.getJson(`secret/${NAME}-unseal-key`)).data.key, unsealKey);
    assert.ok(before.metadata.uid === c.metadata.uid);
    await poll(
      async () =>
        (await ctx.getJson(`openbaocluster/${NAME}`)).status.activeLeader === `${NAME}-0` ? true : undefined,
      120_000,
      "the leader in status",
    );
  });
});
