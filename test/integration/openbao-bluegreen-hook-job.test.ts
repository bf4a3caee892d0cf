import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { JOB } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { observeHook, startHook } from "../../src/targets/openbao/adminops/upgrade/bluegreen/hook-job.js";
import type { BlueGreenStatus } from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// The pre-promotion hook Job under upstream's one name per cluster, `<name>-validation-hook`, on the
// real API server (no Job controller runs here: a Job stays as created). Which attempt a Job belongs
// to is its openbao.org/upgrade-run-id: another attempt's Job under the name is not this attempt's
// verdict and goes before this attempt's is made; a Job an earlier version made under the old
// per-attempt name is still read as its attempt's.

const NAME = "gbao";
const hook = { image: "localhost/platform-operator:dev", args: ["status"] };
const attempt = (operationID: string): BlueGreenStatus => ({
  phase: "Syncing",
  operationID,
  greenRevision: "2-7-2-8b685",
  greenVersion: "2.7.2",
});

describe("openbao blue-green hook Job on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let cluster: OpenBaoCluster;
  const deps = () => ({
    client,
    events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
  });
  const hookJobs = async () =>
    (
      await client.list<KubeObject>(JOB, {
        namespace: ns,
        labelSelector: `openbao.org/cluster=${NAME},openbao.org/component=validation-hook`,
      })
    ).items;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obhook");
    cluster = await createOpenBaoCluster(client, ns, NAME, { replicas: 3 });
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  it("starts one Job under upstream's name for the attempt; starting again keeps it", async () => {
    assert.deepEqual(await observeHook(client, cluster, attempt("a1")), {
      state: "NotStarted",
      jobName: `${NAME}-validation-hook`,
    });
    await startHook(deps(), cluster, attempt("a1"), hook, "cluster.local");
    const [job, ...more] = await hookJobs();
    assert.equal(more.length, 0);
    assert.equal(job!.metadata.name, `${NAME}-validation-hook`);
    assert.equal(job!.metadata.annotations?.["openbao.org/upgrade-run-id"], "a1");
    assert.equal(job!.metadata.ownerReferences?.[0]?.uid, cluster.metadata.uid);
    assert.deepEqual(await observeHook(client, cluster, attempt("a1")), {
      state: "Running",
      jobName: `${NAME}-validation-hook`,
    });
    await startHook(deps(), cluster, attempt("a1"), hook, "cluster.local");
    const again = await hookJobs();
    assert.deepEqual(
      again.map((j) => j.metadata.uid),
      [job!.metadata.uid],
    );
  });

  it("another attempt does not read the earlier attempt's Job; its start deletes it, then makes its own", async () => {
    const earlier = (await hookJobs())[0]!;
    assert.equal((await observeHook(client, cluster, attempt("a2"))).state, "NotStarted");
    await startHook(deps(), cluster, attempt("a2"), hook, "cluster.local");
    assert.equal(
      await client.getOrUndefined(JOB, `${NAME}-validation-hook`, ns),
      undefined,
      "a1's Job is gone",
    );
    await startHook(deps(), cluster, attempt("a2"), hook, "cluster.local");
    const [mine] = await hookJobs();
    assert.notEqual(mine!.metadata.uid, earlier.metadata.uid);
    assert.equal(mine!.metadata.annotations?.["openbao.org/upgrade-run-id"], "a2");
    assert.equal((await observeHook(client, cluster, attempt("a2"))).state, "Running");
  });

  it("a hook Job made under the old name <name>-pre-promotion-<operationID> is still its attempt's", async () => {
    const legacy = `${NAME}-pre-promotion-a3`;
    await client.create(JOB, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: legacy,
        namespace: ns,
        labels: { "openbao.org/cluster": NAME, "openbao.org/component": "upgrade" },
        annotations: { "openbao.org/upgrade-run-id": "a3" },
      },
      spec: {
        backoffLimit: 0,
        template: { spec: { restartPolicy: "Never", containers: [{ name: "hook", image: hook.image }] } },
      },
    });
    assert.deepEqual(await observeHook(client, cluster, attempt("a3")), {
      state: "Running",
      jobName: legacy,
    });
  });
});
