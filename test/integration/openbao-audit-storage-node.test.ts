import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// spec.auditFileStorage (and spec.securityContext) on a real pod: OpenBao's file audit device writes on the claim, in the pod's
// own folder of it. What only a pod shows: the kubelet makes the per-pod folder and OpenBao (not
// root) can write there. The node's provisioner serves ReadWriteOnce only, so the claim is an
// ExistingPVC the test makes (ManagedPVC asks for ReadWriteMany; its objects are proven on the API
// server in openbao-shared-claims-api.test.ts).

const NAME = "abao";

describe("openbao auditFileStorage: the audit log is written on the claim", () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;

  before(async () => {
    ctx = await nodeNamespace("obaud");
    await installOpenBaoCrd(ctx);
  });
  after(async () => {
    if (process.env["OPENBAO_TEST_DUMP"]) console.log(op?.output());
    await op?.stop();
    await deleteNamespace(ctx);
  });

  it("OpenBao starts, initializes with the file audit device, and its log lands in <claim>/<pod>/audit.log", async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
    await ctx.apply(
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "team-audit" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "64Mi" } } },
      },
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: NAME },
        spec: {
          version: BAO_DEFAULT_VERSION,
          replicas: 1,
          storage: { size: "128Mi" },
          auditFileStorage: { mode: "ExistingPVC", existingClaimName: "team-audit" },
          audit: [{ type: "file", path: "file", fileOptions: { filePath: "/openbao/audit/audit.log" } }],
          // spec.securityContext over the operator's defaults: one more group, the rest as defaulted.
          securityContext: { supplementalGroups: [4242] },
        },
      },
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=1", 300);
    // The pod's /openbao/audit is the claim's folder named after the pod: a second pod mounting the
    // whole claim sees the log under abao-0/.
    const size = await ctx.exec(`${NAME}-0`, ["sh", "-c", "wc -c < /openbao/audit/audit.log"]);
    // The process runs as the default uid and gid, with the spec's extra group besides fsGroup's.
    const ids = (await ctx.exec(`${NAME}-0`, ["sh", "-c", "id -u; id -g; id -G"])).trim().split("\n");
    assert.equal(ids[0], "100", `uid: ${ids.join(" / ")}`);
    assert.equal(ids[1], "1000", `gid: ${ids.join(" / ")}`);
    assert.ok(ids[2]?.split(" ").includes("4242"), `groups: ${ids[2]}`);
    assert.ok(Number(size.trim()) > 0, `audit.log has ${size.trim()} bytes`);
    const mounts = await ctx.exec(`${NAME}-0`, ["sh", "-c", "grep ' /openbao/audit ' /proc/mounts || true"]);
    assert.ok(mounts.trim() !== "", "/openbao/audit is a mount of its own");
    await ctx.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "reader" },
      spec: {
        restartPolicy: "Never",
        securityContext: { runAsNonRoot: true, runAsUser: 100, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "r",
            image: `openbao/openbao:${BAO_DEFAULT_VERSION}`,
            command: ["sh", "-c", `test -s /claim/${NAME}-0/audit.log && echo found`],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            volumeMounts: [{ name: "c", mountPath: "/claim", readOnly: true }],
          },
        ],
        volumes: [{ name: "c", persistentVolumeClaim: { claimName: "team-audit", readOnly: true } }],
      },
    });
    await ctx.waitFor("pod/reader", "jsonpath={.status.phase}=Succeeded", 300);
    assert.equal((await ctx.kubectl(["logs", "reader"])).trim(), "found");
  });
});
