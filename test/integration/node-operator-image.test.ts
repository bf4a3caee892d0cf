import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { repoRoot } from "../../src/testenv/paths.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";

// The loop a developer runs: change the compiled code, rebuild the operator image, run it on the node.

describe("node: operator image from the working tree", () => {
  let ctx: NodeNamespace;
  const probeName = `.image-probe-${randomBytes(4).toString("hex")}.txt`;
  const probe = join(repoRoot(), "dist", "src", probeName);
  before(async () => {
    ctx = await nodeNamespace("node-image");
  });
  after(async () => {
    rmSync(probe, { force: true });
    await deleteNamespace(ctx);
  });

  it("carries an edit of dist/ into the image the node runs", async () => {
    const marker = randomBytes(8).toString("hex");
    writeFileSync(probe, marker);
    const started = Date.now();
    const image = await reloadOperatorImage(ctx.node.ctr, ctx.node.containerdSocket);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`# operator image rebuilt and imported in ${seconds} s`);
    assert.equal(image.built, true, "the changed code gives a new image");
    await ctx.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "probe" },
      spec: {
        restartPolicy: "Never",
        containers: [
          {
            name: "operator",
            image: OPERATOR_IMAGE,
            imagePullPolicy: "Never",
            command: ["/bin/cat", `/app/dist/src/${probeName}`],
          },
        ],
      },
    });
    await ctx.waitFor("pod/probe", "jsonpath={.status.phase}=Succeeded", 240);
    assert.equal(await ctx.kubectl(["logs", "probe"]), marker);
  });
});
