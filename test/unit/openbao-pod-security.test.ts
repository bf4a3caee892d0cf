import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeObject } from "../../src/runtime/types.js";
import {
  Component,
  type ComponentName,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
} from "../../src/targets/openbao/identity.js";
import { unsupportedFields } from "../../src/targets/openbao/unsupported.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import {
  MAINTENANCE_ANNOTATION,
  maintenancePatches,
} from "../../src/targets/openbao/workload/statefulsets/maintenance.js";
import { DEFAULT_POD_SECURITY_CONTEXT } from "../../src/targets/openbao/workload/statefulsets/security-context.js";
import { CLAIMED_RESOURCES, POD_RESOURCE_CLAIMS, POD_SECURITY } from "../fixtures/openbao/pod-fields.js";
import { DEMO_RUNTIME, demoCluster } from "../support/openbao-demo.js";

// Upstream 0.5's fields of the OpenBao pods themselves, on the StatefulSets the operator builds:
// spec.securityContext over the operator's defaults, spec.maintenance.enabled's mark, spec.resources.claims.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const cluster = demoCluster;
const runtime = DEMO_RUNTIME;
const built = (c: OpenBaoCluster, component: ComponentName = Component.Server): Json =>
  buildStatefulSet(c, { component, replicas: 1, configHash: "h1", clusterDomain: "cluster.local", runtime });
const BOTH = [Component.Server, Component.ReadReplica];

describe("spec.securityContext on the OpenBao pods", () => {
  it("without it, voters and read replicas run with the operator's hardened defaults", () => {
    for (const component of BOTH) {
      const pod = built(cluster(), component).spec.template.spec;
      assert.deepEqual(pod.securityContext, DEFAULT_POD_SECURITY_CONTEXT, component);
      assert.deepEqual(pod.containers[0].securityContext, {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: false,
        capabilities: { drop: ["ALL"] },
      });
    }
  });

  it("every field set replaces the default on voters and read replicas; the container keeps its own", () => {
    for (const component of BOTH) {
      const pod = built(cluster({ securityContext: POD_SECURITY }), component).spec.template.spec;
      assert.deepEqual(pod.securityContext, POD_SECURITY, component);
      assert.equal(pod.containers[0].securityContext.allowPrivilegeEscalation, false);
      assert.deepEqual(pod.containers[0].securityContext.capabilities, { drop: ["ALL"] });
    }
  });

  it("a partial one keeps the defaults of the fields it leaves out", () => {
    const pod = built(cluster({ securityContext: { runAsUser: 2000, fsGroup: 4000 } })).spec.template.spec;
    assert.deepEqual(pod.securityContext, {
      ...DEFAULT_POD_SECURITY_CONTEXT,
      runAsUser: 2000,
      fsGroup: 4000,
    });
  });

  it("workloadHardening.appArmorEnabled sets RuntimeDefault over the spec's AppArmor profile", () => {
    const pod = built(
      cluster({ securityContext: POD_SECURITY, workloadHardening: { appArmorEnabled: true } }),
    ).spec.template.spec;
    assert.deepEqual(pod.securityContext.appArmorProfile, { type: "RuntimeDefault" });
    assert.equal(pod.securityContext.runAsUser, 2000);
  });

  it("the built pod shares nothing with the spec (a later edit of one cannot change the other)", () => {
    const c = cluster({ securityContext: structuredClone(POD_SECURITY) });
    const pod = built(c).spec.template.spec;
    pod.securityContext.supplementalGroups.push(0);
    pod.securityContext.seccompProfile.type = "Unconfined";
    assert.deepEqual(c.spec.securityContext, POD_SECURITY);
    assert.deepEqual(built(cluster()).spec.template.spec.securityContext, DEFAULT_POD_SECURITY_CONTEXT);
  });

  it("is acted on: UnsupportedFields no longer names it", () => {
    assert.deepEqual(unsupportedFields({ securityContext: POD_SECURITY }), []);
  });
});

describe("spec.maintenance.enabled on the StatefulSets and pods", () => {
  it("marks voter and read-replica StatefulSets, never their pod template (entering maintenance rolls nothing)", () => {
    for (const component of BOTH) {
      const off = built(cluster(), component);
      const on = built(cluster({ maintenance: { enabled: true } }), component);
      assert.equal(on.metadata.annotations[MAINTENANCE_ANNOTATION], "true", component);
      assert.equal(off.metadata.annotations?.[MAINTENANCE_ANNOTATION], undefined, component);
      assert.deepEqual(on.spec.template, off.spec.template, component);
      assert.equal(
        built(cluster({ maintenance: { enabled: false } }), component).metadata.annotations,
        undefined,
      );
    }
    // Beside the certificate hash, which stays.
    const withCert = buildStatefulSet(cluster({ maintenance: { enabled: true } }), {
      component: Component.Server,
      replicas: 1,
      configHash: "h1",
      certHash: "c1",
      clusterDomain: "cluster.local",
      runtime,
    }) as Json;
    assert.equal(Object.keys(withCert["metadata"].annotations).length, 2);
    assert.equal(withCert["metadata"].annotations[MAINTENANCE_ANNOTATION], "true");
  });

  const pod = (name: string, component: string, annotations?: Record<string, string>, extra: Json = {}) =>
    ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace: "ns",
        labels: { [LABEL_CLUSTER]: "demo", [LABEL_COMPONENT]: component },
        ...(annotations ? { annotations } : {}),
        ...extra,
      },
    }) as KubeObject;
  const PODS = [
    pod("demo-0", Component.Server),
    pod("demo-1", Component.Server, { [MAINTENANCE_ANNOTATION]: "true" }),
    pod("demo-read-0", Component.ReadReplica, { other: "x" }),
    pod("demo-2", Component.Server, undefined, { deletionTimestamp: "2026-12-06T00:00:00Z" }),
    pod("demo-backup-abc", Component.Backup),
    {
      ...pod("else-0", Component.Server),
      metadata: {
        ...pod("else-0", Component.Server).metadata,
        labels: { [LABEL_CLUSTER]: "else", [LABEL_COMPONENT]: Component.Server },
      },
    } as KubeObject,
  ];

  it("marks each OpenBao pod not yet marked, leaving Jobs, deleted pods and other clusters alone", () => {
    assert.deepEqual(maintenancePatches(cluster({ maintenance: { enabled: true } }), PODS), [
      { name: "demo-0", patch: { metadata: { annotations: { [MAINTENANCE_ANNOTATION]: "true" } } } },
      { name: "demo-read-0", patch: { metadata: { annotations: { [MAINTENANCE_ANNOTATION]: "true" } } } },
    ]);
  });

  it("unmarks them when maintenance ends or the block goes; nothing when nothing is marked", () => {
    for (const spec of [{ maintenance: { enabled: false } }, {}])
      assert.deepEqual(maintenancePatches(cluster(spec), PODS), [
        { name: "demo-1", patch: { metadata: { annotations: { [MAINTENANCE_ANNOTATION]: null } } } },
      ]);
    assert.deepEqual(maintenancePatches(cluster(), [pod("demo-0", Component.Server)]), []);
  });

  it("is acted on: UnsupportedFields no longer names it", () => {
    assert.deepEqual(unsupportedFields({ maintenance: { enabled: true } }), []);
  });
});

describe("dynamic resource claims (resources.claims) of the OpenBao container", () => {
  it("voters: spec.resources' claims on the container, each declared on the pod from its template", () => {
    const pod = built(cluster({ resources: CLAIMED_RESOURCES })).spec.template.spec;
    assert.deepEqual(pod.containers[0].resources, CLAIMED_RESOURCES);
    assert.deepEqual(pod.resourceClaims, POD_RESOURCE_CLAIMS);
    // Read replicas do not inherit the voters' resources, nor their claims.
    const replica = built(cluster({ resources: CLAIMED_RESOURCES }), Component.ReadReplica).spec.template
      .spec;
    assert.equal(replica.resourceClaims, undefined);
  });

  it("read replicas: readReplicas.template.resources' claims, else readReplicas.resources'", () => {
    for (const readReplicas of [
      { replicas: 1, template: { resources: CLAIMED_RESOURCES } },
      { replicas: 1, resources: CLAIMED_RESOURCES },
    ]) {
      const pod = built(cluster({ readReplicas }), Component.ReadReplica).spec.template.spec;
      assert.deepEqual(pod.containers[0].resources, CLAIMED_RESOURCES);
      assert.deepEqual(pod.resourceClaims, POD_RESOURCE_CLAIMS);
      assert.equal(built(cluster({ readReplicas })).spec.template.spec.resourceClaims, undefined);
    }
  });

  it("a container without claims gives the pod no resourceClaims", () => {
    const pod = built(cluster({ resources: { requests: { cpu: "1" } } })).spec.template.spec;
    assert.equal("resourceClaims" in pod, false);
  });

  it("is acted on: UnsupportedFields no longer names them", () => {
    assert.deepEqual(
      unsupportedFields({
        resources: CLAIMED_RESOURCES,
        readReplicas: { resources: CLAIMED_RESOURCES, template: { resources: CLAIMED_RESOURCES } },
      }),
      [],
    );
  });
});
