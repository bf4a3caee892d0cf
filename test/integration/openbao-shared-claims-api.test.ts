import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, PERSISTENT_VOLUME_CLAIM, STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// spec.auditFileStorage and spec.tls.acme.sharedCache with the real operator process on the real API
// server (no node: the claim and the StatefulSet's volumes are written before any pod runs). The
// built objects are unit-tested in openbao-shared-claims.test.ts.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao auditFileStorage and tls.acme.sharedCache on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-claims");
    await installOpenBaoClusterCrd(client);
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
  });
  after(async () => {
    await op?.stop();
    client.close();
  });

  const get = async (type: typeof STATEFULSET, name: string): Promise<Json | undefined> =>
    (await client.get(type, name, ns).catch(() => undefined)) as Json | undefined;

  it("ManagedPVC: the operator creates <name>-audit (ReadWriteMany, unowned) and every voter writes its audit file on it", async () => {
    await createOpenBaoCluster(client, ns, "aud", {
      replicas: 1,
      auditFileStorage: { mode: "ManagedPVC", size: "64Mi", storageClassName: "shared-nfs" },
      audit: [{ type: "file", path: "file", fileOptions: { filePath: "/openbao/audit/audit.log" } }],
    });
    const claim = await eventually(
      () => get(PERSISTENT_VOLUME_CLAIM, "aud-audit"),
      60_000,
      "the audit claim",
    );
    assert.deepEqual(claim["spec"].accessModes, ["ReadWriteMany"]);
    assert.equal(claim["spec"].storageClassName, "shared-nfs");
    assert.equal(claim["spec"].resources.requests.storage, "64Mi");
    assert.equal(claim["metadata"].labels["openbao.org/cluster"], "aud");
    assert.equal(claim["metadata"].ownerReferences, undefined, "deletionPolicy Retain keeps it");

    const sts = await eventually(() => get(STATEFULSET, "aud"), 60_000, "the voter StatefulSet");
    const pod = sts["spec"].template.spec;
    assert.deepEqual(pod.volumes.find((v: Json) => v.name === "audit-storage").persistentVolumeClaim, {
      claimName: "aud-audit",
    });
    assert.deepEqual(
      pod.containers[0].volumeMounts.find((m: Json) => m.name === "audit-storage"),
      { name: "audit-storage", mountPath: "/openbao/audit", subPathExpr: "$(BAO_K8S_POD_NAME)" },
    );
    const cm = await eventually(() => get(CONFIGMAP, "aud-config"), 30_000, "config.hcl");
    assert.match(cm["data"]["config.hcl"], /file_path\s*=\s*"\/openbao\/audit\/audit\.log"/);
    // Acted on: once the workload controller has reported, no UnsupportedFields condition names it.
    const conditions = await eventually(
      async () => {
        const list = ((await client.get(OPENBAOCLUSTER, "aud", ns)) as Json)["status"]?.conditions as
          | Json[]
          | undefined;
        return list?.some((c) => c["type"] === "Available") ? list : undefined;
      },
      60_000,
      "the workload conditions",
    );
    assert.equal(
      conditions.find((c) => c["type"] === "UnsupportedFields"),
      undefined,
    );
  });

  it("a file audit device beside the claim is InvalidSpec naming its field, and no pod is asked for", async () => {
    await createOpenBaoCluster(client, ns, "beside", {
      replicas: 1,
      auditFileStorage: { mode: "ExistingPVC", existingClaimName: "team-audit" },
      audit: [{ type: "file", path: "file", fileOptions: { filePath: "/openbao/logs/audit.log" } }],
    });
    const degraded = await eventually(
      async () =>
        ((await client.get(OPENBAOCLUSTER, "beside", ns)) as Json)["status"]?.conditions?.find(
          (c: Json) => c["type"] === "Degraded" && c["reason"] === "InvalidSpec",
        ),
      60_000,
      "Degraded InvalidSpec",
    );
    assert.match(degraded.message, /audit\[0\]\.fileOptions\.filePath/);
    assert.equal(await get(STATEFULSET, "beside"), undefined);
  });

  it("ExistingPVC shared ACME cache: the named claim is mounted where config.hcl keeps the cache; nothing is created", async () => {
    await createOpenBaoCluster(client, ns, "acme", {
      replicas: 3,
      tls: {
        enabled: true,
        mode: "ACME",
        acme: {
          directoryURL: "https://acme.example/directory",
          domains: ["bao.example"],
          sharedCache: { mode: "ExistingPVC", existingClaimName: "shared-acme" },
        },
      },
    });
    const sts = await eventually(() => get(STATEFULSET, "acme"), 60_000, "the voter StatefulSet");
    const pod = sts["spec"].template.spec;
    assert.deepEqual(pod.volumes.find((v: Json) => v.name === "acme-cache").persistentVolumeClaim, {
      claimName: "shared-acme",
    });
    assert.equal(
      pod.containers[0].volumeMounts.find((m: Json) => m.name === "acme-cache").mountPath,
      "/openbao/acme-cache",
    );
    assert.equal(await get(PERSISTENT_VOLUME_CLAIM, "acme-acme-cache"), undefined);
  });
});
