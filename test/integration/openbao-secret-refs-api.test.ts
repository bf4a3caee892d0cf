import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// Secret references upstream lets name "" (corev1.LocalObjectReference's default), on the real API
// server with the real operator process and no node: `{}` is accepted and stored as {name: ""}; the
// cluster says each one by its field (SecretReferencesNamed=False, SecretReferenceMissingName, with
// a Warning event), the backup waits with that reason and creates no Job, the pods get no pull
// Secret named "", and a restore naming nothing fails at once, naming the field.

const NAME = "refs";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const JOB: ResourceType = { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true };
const STS: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "StatefulSet",
  plural: "statefulsets",
  namespaced: true,
};
const RESTORE: ResourceType = { ...OPENBAOCLUSTER, kind: "OpenBaoRestore", plural: "openbaorestores" };
const EVENTS: ResourceType = {
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};

describe("openbao target: Secret references that name nothing, on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "obrefs");
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    await op?.stop();
    client.close();
  });

  const cluster = async (): Promise<Json> => (await client.get(OPENBAOCLUSTER, NAME, ns)) as Json;
  const condition = (o: Json, type: string): Json | undefined =>
    (o["status"]?.conditions ?? []).find((c: Json) => c.type === type);
  const events = async (kind: string, name: string, reason: string): Promise<Json[]> =>
    ((await client.list(EVENTS, { namespace: ns })).items as Json[]).filter(
      (e) => e["reason"] === reason && e["regarding"]?.kind === kind && e["regarding"]?.name === name,
    );

  const spec = {
    backup: {
      schedule: "0 3 * * *",
      image: "example.invalid/executor:1",
      tokenSecretRef: {},
      target: { bucket: "b", credentialsSecretRef: { name: "" } },
    },
    imagePullSecrets: [{ name: "pull" }, {}],
  };

  it("accepts {} as upstream does and stores the default name", async () => {
    const created = (await createOpenBaoCluster(client, ns, NAME, spec)) as unknown as Json;
    assert.deepEqual(created["spec"].backup.tokenSecretRef, { name: "" });
    assert.deepEqual(created["spec"].backup.target.credentialsSecretRef, { name: "" });
    assert.deepEqual(created["spec"].imagePullSecrets, [{ name: "pull" }, { name: "" }]);
  });

  it("reports each by its field; the backup waits with no Job; the pods pull without the empty one", async () => {
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
    // A manual backup asked for: it must wait on the empty references, not run.
    await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
      metadata: { annotations: { "openbao.org/trigger-backup": "now-1" } },
    });
    const named = await eventually(
      async () => {
        const c = condition(await cluster(), "SecretReferencesNamed");
        return c?.status === "False" ? c : undefined;
      },
      60_000,
      "SecretReferencesNamed=False",
    );
    assert.equal(named["reason"], "SecretReferenceMissingName");
    for (const field of [
      "spec.backup.target.credentialsSecretRef.name",
      "spec.backup.tokenSecretRef.name",
      "spec.imagePullSecrets[1].name",
    ])
      assert.ok(named["message"].includes(`${field} is empty`), `${field} in: ${named["message"]}`);
    const warned = await eventually(
      async () => {
        const found = (await events("OpenBaoCluster", NAME, "SecretReferenceMissingName")).filter(
          (e) => e["type"] === "Warning",
        );
        return found.length > 0 ? found : undefined;
      },
      60_000,
      "a Warning SecretReferenceMissingName event",
    );
    assert.ok(warned.some((e) => /spec\.backup\.tokenSecretRef\.name is empty/.test(e["note"])));

    const backingUp = await eventually(
      async () => {
        const c = condition(await cluster(), "BackingUp");
        return c?.reason === "SecretReferenceMissingName" ? c : undefined;
      },
      60_000,
      "BackingUp saying the empty reference",
    );
    assert.match(
      backingUp["message"],
      /^spec\.backup\.target\.credentialsSecretRef\.name is empty: backups wait/,
    );
    assert.deepEqual((await client.list(JOB, { namespace: ns })).items, [], "no backup Job");

    const sts = await eventually(
      () => client.getOrUndefined<KubeObject>(STS, NAME, ns),
      60_000,
      "the voter StatefulSet",
    );
    assert.deepEqual((sts as Json)["spec"].template.spec.imagePullSecrets, [{ name: "pull" }]);
  });

  it("a restore whose credentials reference names nothing fails at once, naming the field", async () => {
    await client.create(RESTORE, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name: "r1", namespace: ns },
      spec: {
        cluster: NAME,
        jwtAuthRole: "restore",
        source: { key: "k", target: { bucket: "b", credentialsSecretRef: {} } },
      },
    });
    const r = await eventually(
      async () => {
        const o = (await client.get(RESTORE, "r1", ns)) as Json;
        return o["status"]?.phase === "Failed" ? o : undefined;
      },
      60_000,
      "the restore to fail",
    );
    const validated = condition(r, "Validated");
    assert.equal(validated?.["reason"], "SecretReferenceMissingName");
    assert.match(validated?.["message"], /^spec\.source\.target\.credentialsSecretRef\.name is empty/);
    const failed = await eventually(
      async () => {
        const found = await events("OpenBaoRestore", "r1", "RestoreFailed");
        return found.length > 0 ? found : undefined;
      },
      60_000,
      "a RestoreFailed event",
    );
    assert.match(failed[0]["note"], /spec\.source\.target\.credentialsSecretRef\.name is empty/);
  });

  it("once every reference names a Secret (or is left out), the condition goes", async () => {
    await createOpenBaoCluster(client, ns, NAME, {
      backup: { ...spec.backup, tokenSecretRef: { name: "tok" }, target: { bucket: "b" } },
      imagePullSecrets: [{ name: "pull" }],
    });
    await eventually(
      async () => (condition(await cluster(), "SecretReferencesNamed") ? undefined : true),
      60_000,
      "SecretReferencesNamed to go",
    );
  });
});
