import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fixtureVersions } from "../../src/testenv/gitlab-charts.js";
import { HELM_VERSION } from "../../src/testenv/helm.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { IMAGE_CHARTS_DIR, OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
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
            // No cat in a distroless image: node prints the file.
            command: [
              "/usr/local/bin/node",
              "-e",
              `process.stdout.write(require("fs").readFileSync("/app/dist/src/${probeName}"))`,
            ],
          },
        ],
      },
    });
    await ctx.waitFor("pod/probe", "jsonpath={.status.phase}=Succeeded", 240);
    assert.equal(await ctx.kubectl(["logs", "probe"]), marker);
  });

  it("carries helm and the bundled charts, usable by the image's non-root user", async () => {
    // No securityContext: the pod runs as the image's own user, as the chart's Deployment does.
    // `helm show chart` reads each archive the way a render does (the gitlab target's helm home is
    // a folder that does not exist, so nothing here may need one either). No shell in the image:
    // node runs helm, as the gitlab target does.
    const script = `
      const { execFileSync } = require("child_process");
      const { readdirSync } = require("fs");
      const env = { ...process.env, HOME: "/nonexistent/helm", HELM_CONFIG_HOME: "/nonexistent/helm/config",
        HELM_CACHE_HOME: "/nonexistent/helm/cache", HELM_DATA_HOME: "/nonexistent/helm/data" };
      const helm = (args) => execFileSync(process.env.HELM_BINARY, args, { env, encoding: "utf8" });
      console.log(process.getuid());
      console.log("charts=" + process.env.HELM_CHARTS + " binary=" + process.env.HELM_BINARY);
      console.log(helm(["version", "--template", "helm={{.Version}}"]));
      for (const f of readdirSync(process.env.HELM_CHARTS).filter((f) => f.endsWith(".tgz"))) {
        const version = helm(["show", "chart", process.env.HELM_CHARTS + "/" + f]).split(String.fromCharCode(10)).find((l) => l.startsWith("version:"));
        console.log("chart=" + f + " " + version);
      }`;
    await ctx.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "helm-probe" },
      spec: {
        restartPolicy: "Never",
        containers: [
          {
            name: "operator",
            image: OPERATOR_IMAGE,
            imagePullPolicy: "Never",
            command: ["/usr/local/bin/node", "-e", script],
          },
        ],
      },
    });
    await ctx.waitFor("pod/helm-probe", "jsonpath={.status.phase}=Succeeded", 240);
    const lines = (await ctx.kubectl(["logs", "helm-probe"])).trim().split("\n");
    assert.equal(lines[0], "65532", "the image runs as its non-root user");
    assert.equal(lines[1], `charts=${IMAGE_CHARTS_DIR} binary=/usr/local/bin/helm`);
    assert.equal(lines[2], `helm=${HELM_VERSION}`);
    const expected = (await fixtureVersions()).map(
      (v) => `chart=gitlab-${v.version}.tgz version: ${v.version}`,
    );
    assert.deepEqual(lines.slice(3).sort(), expected.sort());
  });

  it("has no shell: a container started with /bin/sh does not start", async () => {
    await ctx.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "shell-probe" },
      spec: {
        restartPolicy: "Never",
        containers: [
          {
            name: "operator",
            image: OPERATOR_IMAGE,
            imagePullPolicy: "Never",
            command: ["/bin/sh", "-c", "echo reached"],
          },
        ],
      },
    });
    // runc cannot exec a file that is not there: the container ends in StartError, never Running.
    await ctx.waitFor("pod/shell-probe", "jsonpath={.status.phase}=Failed", 240);
    const pod = (await ctx.getJson("pod/shell-probe")) as {
      status: { containerStatuses: { state: { terminated?: { reason: string; message?: string } } }[] };
    };
    const terminated = pod.status.containerStatuses[0]!.state.terminated!;
    assert.equal(terminated.reason, "StartError");
    assert.match(terminated.message ?? "", /\/bin\/sh.*no such file or directory/);
  });
});
