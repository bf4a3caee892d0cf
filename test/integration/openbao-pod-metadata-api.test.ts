import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { CONFIGMAP, POD, SERVICE_ACCOUNT, STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { Component, LABEL_CLUSTER, LABEL_COMPONENT } from "../../src/targets/openbao/identity.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import { MAINTENANCE_ANNOTATION } from "../../src/targets/openbao/workload/statefulsets/maintenance.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CLAIMED_RESOURCES, POD_RESOURCE_CLAIMS, POD_SECURITY } from "../fixtures/openbao/pod-fields.js";
import { SCHEDULING } from "../fixtures/openbao/scheduling.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// Upstream 0.5's podMetadata, voter resources and plugin_directory with the real operator process on
// the real API server (no node: the voter StatefulSet and config.hcl are written before any pod runs,
// which is all these fields change). The built objects themselves are unit-tested in
// openbao-pod-metadata.test.ts.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

describe("openbao podMetadata, resources and plugin_directory on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-podmeta");
    await installOpenBaoClusterCrd(client);
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
  });
  after(async () => {
    await op?.stop();
    client.close();
  });

  const configOf = async (name: string): Promise<string | undefined> => {
    const cm = (await client.get(CONFIGMAP, `${name}-config`, ns).catch(() => undefined)) as Json | undefined;
    return cm?.["data"]?.["config.hcl"];
  };

  it("the voter pods carry the labels, annotations and resources; config.hcl gains plugin_directory only with a plugin", async () => {
    await createOpenBaoCluster(client, ns, "meta", {
      replicas: 1,
      podMetadata: {
        labels: { "team.example.com/owner": "payments", "openbao.org/cluster": "spoof" },
        annotations: { "example.com/scrape": "yes" },
      },
      resources: { requests: { cpu: "50m", memory: "64Mi" } },
      configuration: { plugin: { autoDownload: true } },
      // Acted on since: the condition must not name it.
      readReplicas: { replicas: 0, template: { scheduling: { nodeSelector: { zone: "a" } } } },
    });
    const sts = await eventually(
      async () => (await client.get(STATEFULSET, "meta", ns).catch(() => undefined)) as Json | undefined,
      60_000,
      "the voter StatefulSet",
    );
    const meta = sts["spec"].template.metadata;
    assert.equal(meta.labels["team.example.com/owner"], "payments");
    assert.equal(meta.labels["openbao.org/cluster"], "meta", "the operator's selector label wins");
    assert.equal(meta.annotations["example.com/scrape"], "yes");
    assert.ok(meta.annotations["openbao.org/config-hash"], "the rollout hash is still there");
    // The API server accepted the template: its selector still matches the pod labels.
    for (const [k, v] of Object.entries(sts["spec"].selector.matchLabels as Record<string, string>))
      assert.equal(meta.labels[k], v, k);
    assert.deepEqual(sts["spec"].template.spec.containers[0].resources, {
      requests: { cpu: "50m", memory: "64Mi" },
    });

    const text = await eventually(() => configOf("meta"), 30_000, "config.hcl");
    assert.doesNotMatch(text, /plugin_directory/);
    assert.match(text, /plugin_auto_download\s*=\s*true/);

    // The pass that wrote the other conditions decided UnsupportedFields too: it is absent.
    const conditions: Json[] = await eventually(
      async () => {
        const c = ((await client.get(OPENBAOCLUSTER, "meta", ns)) as Json)["status"]?.conditions;
        return c?.some((x: Json) => x["type"] === "Available") ? c : undefined;
      },
      60_000,
      "the cluster's conditions",
    );
    assert.equal(
      conditions.find((c) => c["type"] === "UnsupportedFields"),
      undefined,
      JSON.stringify(conditions.find((c) => c["type"] === "UnsupportedFields")),
    );

    // Declaring a plugin brings plugin_directory into config.hcl (and a new hash rolls the pods).
    await client.mergePatch(OPENBAOCLUSTER, "meta", ns, {
      spec: {
        plugins: [
          {
            type: "secret",
            name: "aws",
            image: "ghcr.io/openbao/openbao-plugin-secrets-aws",
            version: "v1.0.0",
            binaryName: "openbao-plugin-secrets-aws",
            sha256sum: "a".repeat(64),
          },
        ],
      },
    });
    const withPlugin = await eventually(
      async () => {
        const t = await configOf("meta");
        return t && /plugin_directory/.test(t) ? t : undefined;
      },
      60_000,
      "plugin_directory in config.hcl",
    );
    assert.match(withPlugin, /^plugin_directory\s*=\s*"\/openbao\/plugins"$/m);
  });

  it("the API server accepts a read-replica StatefulSet with every scheduling field (dry run)", async () => {
    const c = (await client.get(OPENBAOCLUSTER, "meta", ns)) as unknown as OpenBaoCluster;
    const withScheduling = {
      ...c,
      spec: { ...c.spec, readReplicas: { replicas: 1, template: { scheduling: SCHEDULING } } },
    } as OpenBaoCluster;
    const sts = buildStatefulSet(withScheduling, {
      component: Component.ReadReplica,
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime: { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] },
    });
    const answer = (await client.apply(STATEFULSET, sts as never, {
      fieldManager: "test",
      dryRun: true,
    })) as Json;
    for (const [k, v] of Object.entries(SCHEDULING)) assert.deepEqual(answer["spec"].template.spec[k], v, k);
  });

  /** The API server's answer to a dry-run apply of the StatefulSet built for `spec` over the stored cluster's. */
  const dryRun = async (
    component: typeof Component.Server | typeof Component.ReadReplica,
    spec: Json,
  ): Promise<Json> => {
    const c = (await client.get(OPENBAOCLUSTER, "meta", ns)) as unknown as OpenBaoCluster;
    const sts = buildStatefulSet({ ...c, spec: { ...c.spec, ...spec } } as OpenBaoCluster, {
      component,
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime: { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] },
    });
    // Forced: the operator owns the live voter StatefulSet's fields; a dry run changes nothing anyway.
    return (await client.apply(STATEFULSET, sts as never, {
      fieldManager: "test",
      dryRun: true,
      force: true,
    })) as Json;
  };

  it("the API server accepts voter and read-replica StatefulSets with every pod securityContext field (dry run)", async () => {
    for (const component of [Component.Server, Component.ReadReplica]) {
      const answer = await dryRun(component, {
        securityContext: POD_SECURITY,
        readReplicas: { replicas: 1 },
      });
      assert.deepEqual(answer["spec"].template.spec.securityContext, POD_SECURITY, component);
    }
  });

  it("the API server accepts voter and read-replica StatefulSets whose container claims dynamic resources (dry run)", async () => {
    const spec = {
      resources: CLAIMED_RESOURCES,
      readReplicas: { replicas: 1, template: { resources: CLAIMED_RESOURCES } },
    };
    for (const component of [Component.Server, Component.ReadReplica]) {
      const pod = (await dryRun(component, spec))["spec"].template.spec;
      assert.deepEqual(pod.containers[0].resources.claims, CLAIMED_RESOURCES.claims, component);
      assert.deepEqual(pod.resourceClaims, POD_RESOURCE_CLAIMS, component);
    }
    // Why the pod's half is declared: the container's alone (upstream's StatefulSet) is refused.
    const c = (await client.get(OPENBAOCLUSTER, "meta", ns)) as unknown as OpenBaoCluster;
    const halfOnly = buildStatefulSet({ ...c, spec: { ...c.spec, ...spec } } as OpenBaoCluster, {
      component: Component.Server,
      replicas: 1,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime: { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] },
    }) as Json;
    delete halfOnly["spec"].template.spec.resourceClaims;
    await assert.rejects(
      client.apply(STATEFULSET, halfOnly as never, { fieldManager: "test", dryRun: true, force: true }),
      /claims/,
    );
  });

  it("maintenance.enabled marks the StatefulSet and the OpenBao pods, and unmarks them after (the operator's own pass)", async () => {
    // A pod no node runs: the operator marks what the API server lists, running or not. (No
    // controller-manager here makes the namespace's default ServiceAccount the pod needs.)
    await client.create(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: ns },
    } as never);
    await client.create(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "meta-maintenance-probe",
        namespace: ns,
        labels: { [LABEL_CLUSTER]: "meta", [LABEL_COMPONENT]: Component.Server },
      },
      spec: { containers: [{ name: "c", image: "example.invalid/none:1" }] },
    } as never);
    const marks = async (): Promise<[string | undefined, string | undefined]> => {
      const sts = (await client.get(STATEFULSET, "meta", ns)) as Json;
      const pod = (await client.get(POD, "meta-maintenance-probe", ns)) as Json;
      return [
        sts["metadata"].annotations?.[MAINTENANCE_ANNOTATION],
        pod["metadata"].annotations?.[MAINTENANCE_ANNOTATION],
      ];
    };
    const template = ((await client.get(STATEFULSET, "meta", ns)) as Json)["spec"].template;
    await client.mergePatch(OPENBAOCLUSTER, "meta", ns, { spec: { maintenance: { enabled: true } } });
    await eventually(
      async () => ((await marks()).every((m) => m === "true") ? true : undefined),
      60_000,
      "the maintenance mark on the StatefulSet and the pod",
    );
    // Entering maintenance rolls nothing: the pod template is as it was.
    assert.deepEqual(((await client.get(STATEFULSET, "meta", ns)) as Json)["spec"].template, template);
    await client.mergePatch(OPENBAOCLUSTER, "meta", ns, { spec: { maintenance: { enabled: false } } });
    await eventually(
      async () => ((await marks()).every((m) => m === undefined) ? true : undefined),
      60_000,
      "the maintenance mark gone from the StatefulSet and the pod",
    );
  });
});
