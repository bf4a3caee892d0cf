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

// Self-initialization on the local node: OpenBao runs the spec's requests itself on first start; the
// operator only observes, records initialized + selfInitialized, and makes the requests inert.

const NAME = "selfbao";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao target: self-initialization on the local node", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obs");
    await installOpenBaoCrd(ctx);
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
  });
  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    await deleteNamespace(ctx);
  });

  it("reaches initialized with selfInitialized, runs the requests, keeps no root token and empties the requests", async () => {
    const password = "self-init-test-password";
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: 1,
        storage: { size: "128Mi" },
        tls: { enabled: false },
        deletionPolicy: "DeletePVCs",
        selfInit: {
          enabled: true,
          requests: [
            { name: "userpass", operation: "update", path: "sys/auth/userpass", data: { type: "userpass" } },
            {
              name: "reader",
              operation: "update",
              path: "sys/policies/acl/reader",
              data: { policy: 'path "sys/mounts" { capabilities = ["read"] }' },
            },
            {
              name: "tester",
              operation: "update",
              path: "auth/userpass/users/tester",
              data: { password, token_policies: "reader" },
            },
            { name: "kv", operation: "update", path: "sys/mounts/kv", data: { type: "kv" } },
          ],
        },
      },
    });
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    const c = await ctx.getJson(`openbaocluster/${NAME}`);
    assert.equal(c.status.selfInitialized, true);
    const init = c.status.conditions.find((x: Json) => x.type === "OpenBaoInitialized");
    assert.equal(init.status, "True");
    assert.equal(init.reason, "SelfInitialized");

    // No root-token Secret in self-init mode.
    const secrets = await ctx.getJson("secrets");
    assert.ok(!secrets.items.some((s: Json) => s.metadata.name === `${NAME}-root-token`));

    // The requests really ran inside OpenBao: the user they created logs in and sees the kv mount.
    const mounts = await poll(
      async () => {
        const out = await ctx.kubectl([
          "exec",
          `${NAME}-0`,
          "--",
          "sh",
          "-c",
          `BAO_TOKEN=$(bao login -method=userpass -token-only username=tester password=${password}) bao read -format=json sys/mounts`,
        ]);
        return JSON.parse(out).data;
      },
      120_000,
      "a login as the self-init user",
    );
    assert.ok(mounts["kv/"], `kv/ mounted: ${Object.keys(mounts).join(", ")}`);

    // The request file is inert: a restart cannot replay it. It is a Secret: requests carry passwords.
    const held = await poll(
      async () => {
        const m = await ctx.getJson(`secret/${NAME}-self-init`);
        return m.metadata.annotations?.["openbao.org/self-init"] === "consumed" ? m : undefined;
      },
      120_000,
      "the self-init Secret to be made inert",
    );
    const file = Buffer.from(held.data["self-init.hcl"], "base64").toString("utf8");
    assert.ok(!file.includes("initialize"), file);
    assert.ok(!file.includes(password));
    assert.equal(await ctx.getJson(`configmap/${NAME}-self-init`).catch(() => undefined), undefined);
    assert.ok(!op!.output().includes(password), "a request value appears in the operator's log");
  });

  it("deletionPolicy DeletePVCs removes the data volumes and keeps the seal key", async () => {
    assert.equal((await ctx.getJson("pvc")).items.length, 1);
    await ctx.kubectl(["delete", `openbaocluster/${NAME}`, "--wait=true", "--timeout=300s"]);
    await poll(
      async () => ((await ctx.getJson("pvc")).items.length === 0 ? true : undefined),
      300_000,
      "the data claim to be deleted",
    );
    const secrets = (await ctx.getJson("secrets")).items.map((s: Json) => s.metadata.name);
    assert.ok(secrets.includes(`${NAME}-unseal-key`), "the seal key outlives the cluster object");
  });
});
