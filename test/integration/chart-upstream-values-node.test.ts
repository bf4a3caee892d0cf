import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { upstreamDefaults } from "../support/upstream-chart-values.js";

// A values file written for upstream openbao-operator's chart, installed with this chart on the
// local node: upstream's whole default file, with its README's single-tenant example on top
// (fullnameOverride, tenancy.mode single, tenancy.targetNamespace), the image pointed at the one built
// from this tree, and the one line this chart needs besides (targets.openbao.enabled). Upstream's
// defaults turn on its NetworkPolicy and admission policies; the operator's pods must still reach
// their API server and OpenBao and form a cluster under those locks.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Obj = Record<string, any>;

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const RELEASE = "openbao-operator";
const FULLNAME = "team-bao-operator";
const PROCESS = `${FULLNAME}-openbao`;
const BAO = "bao";

describe("upstream's chart values installed unchanged on the local node", { timeout: 20 * 60_000 }, () => {
  let sys: NodeNamespace;
  let target: NodeNamespace;
  let helm = "";
  let dir = "";
  const helmRun = (args: string[]) =>
    runCommand(helm, [...args, "--kubeconfig", sys.node.kubeconfigPath, "--namespace", sys.namespace]);

  before(async () => {
    helm = await ensureHelm();
    dir = makeTempDir("upstream-values-");
    sys = await nodeNamespace("ob-sys");
    target = await nodeNamespace("ob-target");
    for (const ns of [sys.namespace, target.namespace])
      await sys.kubectl(["label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted"]);
  });
  after(async () => {
    await target?.kubectl(["delete", "openbaoclusters", "--all", "--timeout=120s"]).catch(() => undefined);
    if (sys) await helmRun(["uninstall", RELEASE, "--wait", "--timeout", "2m"]).catch(() => undefined);
    await deleteNamespace(target);
    await deleteNamespace(sys);
    if (dir) await removeTempDir(dir);
  });

  it("installs, its operator pod becomes ready, and it forms an OpenBaoCluster in tenancy.targetNamespace", async () => {
    const values = upstreamDefaults();
    values.fullnameOverride = FULLNAME;
    values.tenancy = { mode: "single", targetNamespace: target.namespace };
    values.image = {
      ...values.image,
      repository: "localhost/platform-operator",
      tag: "dev",
      pullPolicy: "Never",
    };
    values.targets = {
      openbao: { enabled: true, config: { pollInterval: "2s" } },
      vault: { enabled: false },
    };
    const file = `${dir}/values.yaml`;
    await writeFile(file, stringify(values));
    const t = performance.now();
    const installed = await helmRun([
      "install",
      RELEASE,
      CHART,
      "--values",
      file,
      "--wait",
      "--timeout",
      "5m",
    ]);
    assert.match(installed.stdout, /STATUS: deployed/);
    // The NOTES name the Deployment after fullnameOverride, with controller.replicas.
    assert.match(installed.stdout, new RegExp(`Deployment ${PROCESS} runs the openbao target \\(1 replicas`));
    // upstream's file carries provisioner.*: NOTES says it has nothing to apply to here.
    assert.match(installed.stdout, /provisioner\.\* \(affinity, extraArgs, .*\) has nothing to apply to/);
    const deployment = await sys.getJson(`deployment/${PROCESS}`);
    assert.equal(deployment.status.readyReplicas, 1, "controller.replicas: 1, ready");
    const pod = deployment.spec.template.spec;
    assert.deepEqual(pod.containers[0].resources, values.controller.resources);
    // Upstream's NetworkPolicy default is on; here it guards ingress only, so the operator still
    // reaches the API server and OpenBao where policies are enforced (this node's CNI enforces none,
    // so only the policy's shape can be checked here).
    const policy = await sys.getJson(`networkpolicy/${PROCESS}`);
    assert.deepEqual(policy.spec.policyTypes, ["Ingress"]);

    await target.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: BAO, namespace: target.namespace },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: 1,
        storage: { size: "128Mi" },
        deletionPolicy: "DeleteAll",
      },
    });
    const on = `openbaocluster/${BAO}`;
    await target.waitFor(on, "jsonpath={.status.initialized}=true", 600);
    await target.waitFor(on, "jsonpath={.status.phase}=Running", 300);
    // The phase and the seal condition come from different writes: wait for the condition too.
    await target.waitFor(on, "condition=OpenBaoSealed=False", 300);
    const cluster = await target.getJson(on);
    const cond = (type: string) => (cluster.status.conditions as Obj[]).find((c) => c.type === type);
    assert.equal(cond("OpenBaoSealed")?.status, "False");
    process.stdout.write(
      `# installed with upstream's values and formed a cluster in ${((performance.now() - t) / 1000).toFixed(1)} s\n`,
    );
    // Formed by the chart's pod, under the chart's admission policies (upstream's default: on):
    // an edit of an object the cluster owns is refused even to a cluster admin.
    const events: Obj[] = JSON.parse(
      await target.kubectl(["get", "events.events.k8s.io", "-o", "json"]),
    ).items;
    const mine = events.filter((e) => e.regarding?.kind === "OpenBaoCluster" && e.regarding?.name === BAO);
    assert.ok(mine.length > 0, "the operator recorded Events on the cluster");
    for (const e of mine) assert.ok(String(e.reportingInstance).includes(`${PROCESS}-`), e.reportingInstance);
    const edit = await target
      .kubectl(["annotate", `configmap/${BAO}-config`, "example.test/edited=yes"])
      .then(
        () => "admitted",
        (e: Error) => e.message,
      );
    assert.match(edit, /this object belongs to an OpenBaoCluster and only the operator changes it/);
  });
});
