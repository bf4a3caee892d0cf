import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { backupJobName } from "../../src/targets/openbao/adminops/backup/schedule.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import {
  dryRunWrites,
  metricSum,
  startOpenBaoOperatorOnApi,
  storedWrites,
} from "../support/openbao-operator.js";

// Observe-only against the real API server, with the real operator process and no node: an
// observe-only pass needs no pod (it stops at initialization waiting for pod 0, saying init would
// follow), so everything it would store, and everything it must not, shows here. Writes are counted
// by the operator's own client metrics, dry runs apart. The node test (openbao-observe) adds the
// switch to a real run that initializes real pods.

const NAME = "bao";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const JOB: ResourceType = { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true };
const RESTORE: ResourceType = {
  group: "openbao.org",
  version: "v1alpha1",
  kind: "OpenBaoRestore",
  plural: "openbaorestores",
  namespaced: true,
};

const kinds: Array<[string, string, string]> = [
  ["apps", "v1", "statefulsets"],
  ["", "v1", "services"],
  ["", "v1", "configmaps"],
  ["", "v1", "secrets"],
  ["policy", "v1", "poddisruptionbudgets"],
  ["networking.k8s.io", "v1", "networkpolicies"],
  ["", "v1", "serviceaccounts"],
  ["rbac.authorization.k8s.io", "v1", "roles"],
  ["rbac.authorization.k8s.io", "v1", "rolebindings"],
];

describe("openbao target: observe-only on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "obo-api");
    await installOpenBaoClusterCrd(client);
    dir = mkdtempSync(join(tmpdir(), "obo-api-"));
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns, "    observeOnly: true\n");
  });
  after(async () => {
    await op?.stop();
    client.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cluster = async (): Promise<Json> => (await client.get(OPENBAOCLUSTER, NAME, ns)) as Json;
  const drifted = (c: Json): Json | undefined =>
    (c["status"]?.conditions ?? []).find((x: Json) => x.type === "Drifted");
  const children = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const [group, version, plural] of kinds) {
      const type: ResourceType = { group, version, plural, kind: plural, namespaced: true };
      for (const o of (await client.list(type, { namespace: ns })).items as KubeObject[])
        if (o.metadata.name?.startsWith(NAME)) out.push(`${plural}/${o.metadata.name}`);
    }
    return out;
  };
  const reconciles = (m: string) =>
    metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });

  it("stores no child object and no finalizer; Drifted names what a real run would create and the init", async () => {
    await createOpenBaoCluster(client, ns, NAME, { replicas: 3 });
    const d = await eventually(
      async () => {
        const x = drifted(await cluster());
        return x?.status === "True" ? x : undefined;
      },
      120_000,
      "the Drifted condition",
    );
    assert.equal(d["reason"], "ObserveOnly");
    const msg: string = d["message"];
    for (const object of [
      "StatefulSet/bao",
      "ConfigMap/bao-config",
      "Secret/bao-tls-ca",
      "Secret/bao-tls-server",
      "Secret/bao-unseal-key",
      "Service/bao",
      "Service/bao-public",
      "PodDisruptionBudget/bao-pdb",
    ])
      assert.ok(msg.includes(object), `Drifted names ${object}: ${msg}`);
    assert.match(msg, /^a real run would: \d+ create \(/);
    assert.match(msg, /, 1 initialize \(bao-0\)$/);
    assert.deepEqual(await children(), [], "objects stored in observe-only mode");
    const c = await cluster();
    assert.deepEqual(c["metadata"].finalizers ?? [], []);
    assert.notEqual(c["status"].initialized, true);
    const m = await op!.metrics();
    assert.ok(metricSum(m, "openbao_cluster_planned_changes", { name: NAME, action: "create" }) >= 10);
    assert.equal(metricSum(m, "openbao_cluster_planned_changes", { name: NAME, action: "initialize" }), 1);
  });

  it("an observe-only resync stores nothing", async () => {
    let base = await op!.metrics();
    await eventually(
      async () => {
        const now = await op!.metrics();
        if (storedWrites(now) !== storedWrites(base)) {
          base = now;
          return undefined;
        }
        return reconciles(now) >= reconciles(base) + 2 ? true : undefined;
      },
      120_000,
      "two observe-only passes in a row without a stored write",
    );
    const start = await op!.metrics();
    const before = await cluster();
    await eventually(
      async () => (reconciles(await op!.metrics()) >= reconciles(start) + 3 ? true : undefined),
      120_000,
      "three more passes",
    );
    const end = await op!.metrics();
    const passes = reconciles(end) - reconciles(start);
    const stored = storedWrites(end) - storedWrites(start);
    const dry = dryRunWrites(end) - dryRunWrites(start);
    process.stdout.write(
      `# observe-only: ${passes} passes, ${stored} stored writes, ${(dry / passes).toFixed(1)} dry-run requests per pass; ` +
        `${storedWrites(end)} stored writes in all since start (the status report and its transition events)\n`,
    );
    assert.equal(stored, 0, "stored writes during observe-only resyncs");
    assert.ok(dry > 0, "the passes ran their dry-run applies");
    assert.equal((await cluster())["metadata"].resourceVersion, before["metadata"].resourceVersion);
    assert.deepEqual(await children(), []);
  });

  it("runs no backup or restore: Drifted names the backup Job a real run would start; no Job, no lock", async () => {
    // An initialized cluster (as one adopted from an earlier real run would be), a manual backup
    // asked for, and a restore request: a real run would start a backup Job and a restore Job.
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { status: { initialized: true } }, "status");
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "obs-1" } },
      spec: {
        backup: {
          schedule: "0 0 1 1 *",
          tokenSecretRef: { name: "backup-token" },
          target: { bucket: "snaps", endpoint: "http://s3.invalid:9000", usePathStyle: true },
        },
      },
    });
    await client.create(RESTORE, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name: "r1", namespace: ns },
      spec: {
        cluster: NAME,
        tokenSecretRef: { name: "backup-token" },
        source: { key: "a/b.snap", target: { bucket: "snaps", endpoint: "http://s3.invalid:9000" } },
      },
    });
    const job = backupJobName(NAME, { kind: "manual", window: new Date(), trigger: "obs-1" });
    const d = await eventually(
      async () => {
        const x = drifted(await cluster());
        return x?.message.includes("backup (") ? x : undefined;
      },
      120_000,
      "Drifted to name the backup",
    );
    assert.match(d["message"], new RegExp(`1 backup \\(Job/${job}\\)$`));
    const m = await op!.metrics();
    assert.equal(metricSum(m, "openbao_cluster_planned_changes", { name: NAME, action: "backup" }), 1);
    const c = await cluster();
    assert.equal(c["status"].backup, undefined, "status.backup is the backup controller's");
    assert.equal(c["status"].operationLock, undefined);
    assert.equal(
      (c["status"].conditions ?? []).find((x: Json) => x.type === "BackingUp"),
      undefined,
      "no BackingUp condition",
    );
    assert.deepEqual((await client.list(JOB, { namespace: ns })).items, []);
    assert.equal(((await client.get(RESTORE, "r1", ns)) as Json)["status"], undefined);
  });

  it("a normal run of the same cluster then creates the objects and drops Drifted", async () => {
    await op!.stop();
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns, "");
    const made = await eventually(
      async () => {
        const c = await cluster();
        const list = await children();
        return !drifted(c) && list.includes("statefulsets/bao") ? list : undefined;
      },
      120_000,
      "the StatefulSet and a status without Drifted",
    );
    for (const object of [
      "configmaps/bao-config",
      "secrets/bao-tls-ca",
      "secrets/bao-tls-server",
      "secrets/bao-unseal-key",
      "services/bao",
      "services/bao-public",
      "poddisruptionbudgets/bao-pdb",
    ])
      assert.ok(made.includes(object), `${object} after the normal run: ${made.join(", ")}`);
    assert.ok((await cluster())["metadata"].finalizers.includes("openbao.org/openbaocluster-finalizer"));
  });
});
